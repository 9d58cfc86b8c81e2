import type { TestSettings } from "@hookline/testkit";
import { quantileBetween, readEmitHandling } from "./api-latency.js";
import { watchCpu } from "./cpu.js";
import { emitEvents } from "./emit-load.js";
import { type HooklineSession, startHooklineSession } from "./hookline-session.js";
import type { BackendKind, BenchOptions } from "./options.js";
import { type PacedResult, pacedEmit } from "./paced-emit.js";
import type { ReceiverHandle } from "./receiver.js";
import { log, profileEnv } from "./run-support.js";

/**
 * The api's own view of a paced run: Emit's p50 and p99 in ms from its hookline_rpc_handling_seconds,
 * from the call reaching the api to its answer, without the client's share or the network's.
 */
export interface ApiLatency {
  p50Ms: number | undefined;
  p99Ms: number | undefined;
}

export interface EmitLatencyResult {
  backend: BackendKind;
  paced: PacedResult;
  pacedApi: ApiLatency;
  pacedEvents: number;
  /** The closed loop: events accepted and the seconds it took. */
  maxEvents: number;
  maxSeconds: number;
  maxInFlight: number;
  /** CPU seconds per process (group) during the closed loop. */
  maxCpu: Map<string, number>;
  /**
   * The paced run and the closed loop again with the worker stopped (servers only: embedded runs
   * both in one process): what the api answers and accepts when it has the machine to itself, as
   * in a burst that the workers have yet to reach, or on a host of its own. At the paced rate the
   * worker would need more than the machine (4,000 deliveries/s at the defaults), so with it
   * running the paced latencies are those of a saturated host.
   */
  alone?: {
    paced: PacedResult;
    pacedApi: ApiLatency;
    events: number;
    seconds: number;
    cpu: Map<string, number>;
  };
}

const MAX_IN_FLIGHT = 64;

/**
 * Emit latency at a paced rate (open loop), then the most events/s Emit accepts with MAX_IN_FLIGHT
 * calls outstanding. Deliveries run meanwhile, as they would; the backlog is dropped with the backend.
 */
export async function runEmitLatency(
  settings: TestSettings,
  kind: BackendKind,
  options: BenchOptions,
  receiver: ReceiverHandle,
): Promise<EmitLatencyResult> {
  const session = await startHooklineSession(settings, kind, options, receiver, (app) => ({
    ...profileEnv(options.profileDir, kind, app),
    // The api's /metrics, read around each paced run for its own view of the latency.
    ...(app !== "worker" && { HOOKLINE_METRICS_ADDR: "127.0.0.1:0" }),
  }));
  let failed = true;
  try {
    const { emit, tenantId } = session;
    await receiver.reset();
    const warmed = receiver.waitFor(100 * options.endpoints);
    warmed.catch(() => {});
    await emitEvents(emit, { tenantId, prefix: "warm", count: 100, inFlight: options.emitConcurrency });
    await warmed;

    log(
      `Emit: ${options.emitRate} events/s for ${options.emitSeconds} s (${options.endpoints} endpoints each)`,
    );
    const [paced, pacedApi] = await seenByApi(session, () =>
      pacedEmit(emit, {
        tenantId,
        prefix: "paced",
        perSecond: options.emitRate,
        seconds: options.emitSeconds,
      }),
    );
    log(`Emit: as many as accepted in ${options.emitMaxSeconds} s, ${MAX_IN_FLIGHT} in flight`);
    const cpuWindow = watchCpu(session.cpuTargets);
    const max = await emitEvents(emit, {
      tenantId,
      prefix: "max",
      count: Number.MAX_SAFE_INTEGER,
      inFlight: MAX_IN_FLIGHT,
      deadline: performance.now() + options.emitMaxSeconds * 1000,
    });
    const maxCpu = cpuWindow.stop();
    const alone = kind === "servers" ? await acceptedAlone(session, options) : undefined;
    failed = false;
    return {
      ...(alone && { alone }),
      maxCpu,
      backend: kind,
      paced,
      pacedApi,
      pacedEvents: paced.latenciesMs.length,
      maxEvents: max.latenciesMs.length,
      maxSeconds: (max.finishedAt - max.startedAt) / 1000,
      maxInFlight: MAX_IN_FLIGHT,
    };
  } finally {
    await session.close(failed);
  }
}

/** The paced run and the closed loop again once the worker has stopped: the api, PostgreSQL and Redis alone. */
async function acceptedAlone(
  session: HooklineSession,
  options: BenchOptions,
): Promise<EmitLatencyResult["alone"]> {
  const [api, ...workers] = session.processes;
  for (const started of workers) await started.stop();
  log(`Emit with the worker stopped: ${options.emitRate} events/s for ${options.emitSeconds} s`);
  const [paced, pacedApi] = await seenByApi(session, () =>
    pacedEmit(session.emit, {
      tenantId: session.tenantId,
      prefix: "paced-alone",
      perSecond: options.emitRate,
      seconds: options.emitSeconds,
    }),
  );
  // With --profile, the api is profiled over this loop alone (SIGUSR2 starts and ends a profile).
  if (options.profileDir) api?.child.kill("SIGUSR2");
  log(
    `Emit with the worker stopped: as many as accepted in ${options.emitMaxSeconds} s, ${MAX_IN_FLIGHT} in flight`,
  );
  const cpuWindow = watchCpu(session.cpuTargets);
  const run = await emitEvents(session.emit, {
    tenantId: session.tenantId,
    prefix: "alone",
    count: Number.MAX_SAFE_INTEGER,
    inFlight: MAX_IN_FLIGHT,
    deadline: performance.now() + options.emitMaxSeconds * 1000,
  });
  const cpu = cpuWindow.stop();
  if (options.profileDir) api?.child.kill("SIGUSR2");
  return {
    paced,
    pacedApi,
    events: run.latenciesMs.length,
    seconds: (run.finishedAt - run.startedAt) / 1000,
    cpu,
  };
}

/** Runs a paced load and reads what the api timed meanwhile (its first process serves the api). */
async function seenByApi<T>(session: HooklineSession, run: () => Promise<T>): Promise<[T, ApiLatency]> {
  const port = session.processes[0]?.metricsPort;
  if (port === undefined) throw new Error("the api did not report its /metrics port");
  const before = await readEmitHandling(port);
  const result = await run();
  const after = await readEmitHandling(port);
  return [
    result,
    { p50Ms: quantileBetween(before, after, 0.5), p99Ms: quantileBetween(before, after, 0.99) },
  ];
}
