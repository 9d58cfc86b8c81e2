import type { TestSettings } from "@hookline/testkit";
import { watchCpu } from "./cpu.js";
import { emitEvents } from "./emit-load.js";
import { readEngineBusySeconds } from "./engine-busy.js";
import { startHooklineSession } from "./hookline-session.js";
import type { BackendKind, BenchOptions } from "./options.js";
import type { ReceiverHandle } from "./receiver.js";
import { log, profileEnv, progressTicker, serverCounters } from "./run-support.js";
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
  /** Servers: PostgreSQL and Redis work per delivery; embedded: its database thread's; as text. */
  serverWork: string | undefined;
}

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
  const session = await startHooklineSession(settings, kind, options, receiver, (app) => ({
    ...profileEnv(options.profileDir, kind, app),
    // Embedded: its database thread's busy time is read from /metrics.
    ...(app === "standalone" && { HOOKLINE_METRICS_ADDR: "127.0.0.1:0" }),
  }));
  let failed = true;
  try {
    const { emit, attemptLog, processes, cpuTargets: targets, tenantId: TENANT } = session;

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
    log(`emitting ${options.events} events to ${options.endpoints} endpoints (${expected} deliveries)`);
    const toggleProfiles = () => {
      if (options.profileDir) for (const p of processes) p.child.kill("SIGUSR2");
    };
    const servers =
      kind === "servers" && session.databaseUrl ? serverCounters(session.databaseUrl) : undefined;
    const serversBefore = await servers?.sample();
    const metricsPort = kind === "embedded" ? processes[0]?.metricsPort : undefined;
    const engineBefore = await readEngineBusySeconds(metricsPort);
    toggleProfiles();
    const cpuWindow = watchCpu(targets);
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
    const cpu = cpuWindow.stop();
    toggleProfiles();
    const engineAfter = await readEngineBusySeconds(metricsPort);
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
    await session.stopProcesses();
    const seconds = (settledAt - load.startedAt) / 1000;
    const serverWork =
      servers && serversBefore && redisAfter
        ? perDeliveryText(
            difference(serversBefore.postgres, await servers.postgres()),
            difference(serversBefore.redis, redisAfter),
            expected,
          )
        : engineBefore !== undefined && engineAfter !== undefined
          ? engineText(engineAfter - engineBefore, seconds, expected)
          : undefined;
    failed = false;
    return {
      backend: kind,
      deliveries: expected,
      seconds,
      secondsToLastRequest: (last.lastAt - load.startedAt) / 1000,
      emitSeconds: (load.finishedAt - load.startedAt) / 1000,
      emitLatenciesMs: load.latenciesMs,
      cpu,
      serverWork,
    };
  } finally {
    await session.close(failed);
  }
}

/** The embedded database thread's share of the window, and its busy time per delivery. */
function engineText(busySeconds: number, seconds: number, deliveries: number): string {
  const share = Math.round((100 * busySeconds) / seconds);
  const perDelivery = ((1000 * busySeconds) / deliveries).toFixed(2);
  return `  embedded database (PGlite's thread): busy ${share}% of one core, ${perDelivery} ms per delivery`;
}
