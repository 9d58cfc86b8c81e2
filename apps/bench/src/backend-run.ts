import { writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";
import { AttemptLogService, EmitService, EndpointService } from "@hookline/contracts";
import {
  createTestBackend,
  type HooklineApp,
  type HooklineProcess,
  spawnHookline,
  type TestSettings,
} from "@hookline/testkit";
import { track } from "./children.js";
import { cpuBetween, sampleCpu } from "./cpu.js";
import { hooklineCpuTargets } from "./cpu-targets.js";
import { emitEvents } from "./emit-load.js";
import type { BackendKind, BenchOptions } from "./options.js";
import type { ReceiverHandle } from "./receiver.js";
import { log, processEnv, profileEnv, progressTicker, serverCounters } from "./run-support.js";
import { difference, perDeliveryText } from "./server-stats.js";
import { confirmDelivered, waitUntilNonePending } from "./verify.js";

/** What one backend's run measured. */
export interface BackendResult {
  backend: BackendKind;
  deliveries: number;
  /** First Emit sent to no delivery left pending, in seconds. */
  seconds: number;
  /** First Emit sent to the receiver's last request, in seconds. */
  secondsToLastRequest: number;
  /** Time spent emitting (first Emit sent to last answered), in seconds. */
  emitSeconds: number;
  emitLatenciesMs: number[];
  /** CPU seconds each process (group) used during the measured window. */
  cpu: Map<string, number>;
  /** Servers backend: PostgreSQL and Redis work per delivery, as text. */
  serverWork: string | undefined;
}

const TENANT = "bench";
const WARMUP_EVENTS = 100;

/**
 * Runs Hookline on one backend as real processes, sends a warm-up, then emits options.events
 * events to options.endpoints endpoints on the receiver and times them end to end.
 */
export async function runBackend(
  settings: TestSettings,
  kind: BackendKind,
  options: BenchOptions,
  receiver: ReceiverHandle,
): Promise<BackendResult> {
  const backend = await createTestBackend(settings, kind);
  const processes: HooklineProcess[] = [];
  let manager: Http2SessionManager | undefined;
  try {
    const env = processEnv(backend.env, options);
    const start = async (app: HooklineApp) => {
      const appEnv = { ...env, ...profileEnv(options.profileDir, kind, app) };
      const started = await spawnHookline(app, appEnv, { readyTimeoutMs: 120_000 });
      track(started.child, () => started.stop());
      processes.push(started);
    };
    const apps: HooklineApp[] = kind === "embedded" ? ["standalone"] : ["api", "worker"];
    // One after the other: each process migrates the store on start.
    for (const app of apps) await start(app);
    const address = processes[0]?.address;
    if (!address) throw new Error(`${apps[0]} did not report its address`);
    log(
      `${apps.join(" + ")} ready at ${address} (${kind === "embedded" ? "PGlite + BullMQ on PGlite" : "PostgreSQL + Redis"})`,
    );

    manager = new Http2SessionManager(`http://${address}`);
    const transport = createGrpcTransport({ baseUrl: `http://${address}`, sessionManager: manager });
    const emit = createClient(EmitService, transport);
    const attemptLog = createClient(AttemptLogService, transport);
    const endpoints = createClient(EndpointService, transport);
    for (let i = 0; i < options.endpoints; i++) {
      await endpoints.createEndpoint({ tenantId: TENANT, id: `ep-${i}`, url: `${receiver.url}/${i}` });
    }

    // Warm-up: proves every worker consumes every endpoint's queue, opens the connections, warms the JIT.
    const warmup = Math.min(WARMUP_EVENTS, options.events);
    await receiver.reset();
    const warmed = receiver.waitFor(warmup * options.endpoints);
    warmed.catch(() => {}); // awaited below; a rejection meanwhile is not unhandled
    await emitEvents(emit, {
      tenantId: TENANT,
      prefix: "warm",
      count: warmup,
      inFlight: options.emitConcurrency,
    });
    await warmed;
    await waitUntilNonePending(attemptLog, TENANT);
    await receiver.reset();

    const expected = options.events * options.endpoints;
    const targets = hooklineCpuTargets(
      kind,
      apps,
      processes.map((p) => p.child.pid),
      receiver.pid,
    );
    log(`emitting ${options.events} events to ${options.endpoints} endpoints (${expected} deliveries)`);
    const toggleProfiles = () => {
      if (options.profileDir) for (const p of processes) p.child.kill("SIGUSR2");
    };
    const servers =
      kind === "servers" && backend.databaseUrl ? serverCounters(backend.databaseUrl) : undefined;
    const serversBefore = await servers?.sample();
    toggleProfiles();
    const cpuBefore = sampleCpu(targets);
    const reached = receiver.waitFor(expected);
    reached.catch(() => {});
    const ticker = progressTicker(receiver, expected);
    const load = await emitEvents(emit, {
      tenantId: TENANT,
      prefix: "evt",
      count: options.events,
      inFlight: options.emitConcurrency,
    }).finally(() => log(`emit phase over after ${ticker.elapsedSeconds().toFixed(1)} s`));
    if (load.deliveries !== expected)
      throw new Error(`Emit made ${load.deliveries} deliveries, not ${expected}`);
    const last = await reached.finally(() => ticker.stop());
    const settledAt = await waitUntilNonePending(attemptLog, TENANT);
    const cpu = cpuBetween(cpuBefore, sampleCpu(targets));
    toggleProfiles();
    const redisAfter = await servers?.redis();

    log("confirming through ListDeliveries and GetEvent");
    await confirmDelivered(
      { log: attemptLog, emit },
      {
        tenantId: TENANT,
        expected: (options.events + warmup) * options.endpoints,
        eventIds: ["evt-0", `evt-${options.events - 1}`],
        perEvent: options.endpoints,
      },
    );
    // PostgreSQL backends flush their statistics when they exit: stop the processes first.
    for (const started of processes.reverse().splice(0)) await started.stop();
    const serverWork =
      servers && serversBefore && redisAfter
        ? perDeliveryText(
            difference(serversBefore.postgres, await servers.postgres()),
            difference(serversBefore.redis, redisAfter),
            expected,
          )
        : undefined;
    return {
      backend: kind,
      deliveries: expected,
      seconds: (settledAt - load.startedAt) / 1000,
      secondsToLastRequest: (last.lastAt - load.startedAt) / 1000,
      emitSeconds: (load.finishedAt - load.startedAt) / 1000,
      emitLatenciesMs: load.latenciesMs,
      cpu,
      serverWork,
    };
  } catch (error) {
    for (const [i, started] of processes.entries()) {
      const path = join(tmpdir(), `hookline-bench-${kind}-${i}-${started.child.pid}.log`);
      await writeFile(path, started.log.join(""));
      log(`log of ${kind} process ${started.child.pid}: ${path}`);
    }
    throw error;
  } finally {
    manager?.abort();
    // Reverse order: the worker finishes its attempts before the api goes.
    for (const started of processes.reverse()) await started.stop();
    await backend.dispose();
  }
}
