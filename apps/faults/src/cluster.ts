import { createHooklineClient, type HooklineClient } from "@hookline/client";
import { type HooklineApp, type HooklineProcess, spawnHookline } from "@hookline/testkit";
import { type Deployment, deploy, endpointCap, FAST_ENV, type OwnServers } from "./backend.js";
import type { Fault } from "./check.js";
import { reapOnExit } from "./reaper.js";
import { type Behaviour, type FaultReceiver, startFaultReceiver } from "./receiver.js";
import { createEndpoints, type RunVerdict, settleAndCheck } from "./run.js";
import { type EventStream, startEventStream, trace } from "./stream.js";

/** A running deployment under test: its processes, a receiver, and a stream of events. */
export interface ClusterRun {
  deployment: Deployment;
  client: HooklineClient;
  receiver: FaultReceiver;
  stream: EventStream;
  /** Servers: the api process. Embedded: undefined (the standalone process is workers[0]). */
  api: HooklineProcess | undefined;
  workers: HooklineProcess[];
  /** Starts one more worker (embedded: the standalone process) on the same deployment. */
  startWorker(env?: Record<string, string>): Promise<HooklineProcess>;
  /** Starts the api again (servers) on the same address. */
  startApi(env?: Record<string, string>): Promise<HooklineProcess>;
  faults: Fault[];
  tenantId: string;
  /** After the run settled: the current api and workers that had exited (none should have). */
  exitedBeforeTeardown: string[];
}

export interface ClusterSpec {
  scenario: string;
  /** Our own servers; undefined runs the embedded default (one standalone process). */
  own: OwnServers | undefined;
  workers?: number;
  events: number;
  perSecond: number;
  endpoints?: number;
  behaviour?: Behaviour;
  env?: Record<string, string>;
  /** Environment for the first api process only (the fault hook). */
  apiEnv?: Record<string, string>;
  onError?: "retry" | "give-up";
  /** Injects the faults while the stream runs, recording each in run.faults. */
  inject(run: ClusterRun): Promise<void>;
  /** How long deliveries may take to settle after the stream ends (default 150 s). */
  settleTimeoutMs?: number;
}

export const ENDPOINTS = 4;

// Processes the harness stopped or killed on purpose.
const intended = new WeakSet<HooklineProcess>();

/**
 * Starts a Hookline process that dies with this test process, and whose log is shown if it exits
 * without the harness asking (137, the api's test hook, is asked for).
 */
export async function spawnWatched(app: HooklineApp, env: Record<string, string>): Promise<HooklineProcess> {
  const proc = await spawnHookline(app, env);
  const unreap = reapOnExit(() => proc.child.kill("SIGKILL"));
  proc.child.once("exit", (code, signal) => {
    unreap();
    if (intended.has(proc) || code === 137) return;
    console.error(
      `${app} exited on its own (${code ?? signal}); its last log lines:\n${proc.log.slice(-20).join("")}`,
    );
  });
  return proc;
}

/** Runs a scenario end to end: start, stream, inject, settle, judge, and always clean up. */
export async function runCluster(spec: ClusterSpec): Promise<{ run: ClusterRun; verdict: RunVerdict }> {
  const deployment = await deploy(spec.own, spec.env);
  const receiver = await startFaultReceiver(spec.behaviour);
  const procs: HooklineProcess[] = [];
  const spawn = async (app: HooklineApp, env: Record<string, string> = {}) => {
    const proc = await spawnWatched(app, { ...deployment.env, ...env });
    procs.push(proc);
    return proc;
  };
  const client = createHooklineClient({ address: deployment.address });
  try {
    const embedded = spec.own === undefined;
    const api = embedded ? undefined : await spawn("api", spec.apiEnv);
    const workers: HooklineProcess[] = [];
    const startWorker = (env?: Record<string, string>) =>
      spawn(embedded ? "standalone" : "worker", { ...(embedded ? spec.apiEnv : {}), ...env });
    for (let i = 0; i < (embedded ? 1 : (spec.workers ?? 1)); i++) workers.push(await startWorker());
    const tenantId = "t";
    const endpoints = await createEndpoints(client, tenantId, receiver, spec.endpoints ?? ENDPOINTS);
    const stream = startEventStream({
      client,
      tenantId,
      prefix: "e",
      count: spec.events,
      perSecond: spec.perSecond,
      concurrency: 8,
      onError: spec.onError ?? "retry",
      deadlineMs: 120_000,
    });
    const run: ClusterRun = {
      deployment,
      client,
      receiver,
      stream,
      api,
      workers,
      startWorker,
      startApi: (env) => spawn("api", env),
      faults: [],
      tenantId,
      exitedBeforeTeardown: [],
    };
    await spec.inject(run);
    trace(`${spec.scenario}: faults injected`);
    const verdict = await settleAndCheck({
      scenario: spec.scenario,
      client,
      tenantId,
      endpoints,
      receiver,
      stream,
      faults: run.faults,
      windowMs:
        Number(deployment.env.HOOKLINE_DELIVERY_TIMEOUT_MS ?? FAST_ENV.HOOKLINE_DELIVERY_TIMEOUT_MS) + 1000,
      // A fault repeats the requests in flight (each endpoint's cap at most) and the answered
      // attempts whose record had not landed: a job ends at the answer and its record follows it
      // (apps/worker/src/deferred-writes.ts), which at these rates is about one more per slot.
      inFlightBound: 2 * endpoints.length * endpointCap(deployment.env),
      // A process that dies leaves its jobs to BullMQ's stalled-job check: up to two minutes.
      settleTimeoutMs: spec.settleTimeoutMs ?? 150_000,
    });
    for (const [name, proc] of [
      ["api", run.api],
      ...run.workers.map((w, i) => [`worker ${i}`, w] as const),
    ] as const)
      if (proc && (proc.child.exitCode !== null || proc.child.signalCode !== null))
        run.exitedBeforeTeardown.push(name);
    // A disagreement is easier to explain with what the processes warned of: print their
    // warnings and errors, a few each.
    if (verdict.problems.length > 0)
      for (const proc of procs) {
        const lines = proc.log
          .join("")
          .split("\n")
          .filter((line) => /"level":"(warn|error|fatal)"/.test(line));
        if (lines.length > 0)
          console.log(`${spec.scenario}: pid ${proc.child.pid} warned:\n${lines.slice(0, 15).join("\n")}`);
      }
    return { run, verdict };
  } finally {
    client.close();
    // A process that ignores SIGTERM (a hung one) must not hang the suite.
    await Promise.all(procs.map((proc) => stopWithin(proc, 10_000)));
    await receiver.close();
    await deployment.dispose();
  }
}

/** SIGTERM, and SIGKILL if it has not exited within ms; resolves to true when it stopped cleanly. */
export async function stopWithin(proc: HooklineProcess, ms: number): Promise<boolean> {
  intended.add(proc);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), ms);
  });
  const outcome = await Promise.race([proc.stop(), timeout]);
  clearTimeout(timer);
  if (outcome !== "timeout") return true;
  await proc.kill();
  return false;
}

/** Kills a process (SIGKILL) and records the fault; a caller that restarts it moves `end` on. */
export async function killAt(run: ClusterRun, proc: HooklineProcess, kind: string): Promise<Fault> {
  intended.add(proc);
  const start = Date.now();
  trace(`${kind}: ${run.stream.acked.size} acked, ${run.receiver.receipts.length} requests so far`);
  await proc.kill();
  const fault = { kind, start, end: Date.now() };
  run.faults.push(fault);
  return fault;
}
