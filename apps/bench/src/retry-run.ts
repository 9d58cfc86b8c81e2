import type { TestSettings } from "@hookline/testkit";
import { emitEvents } from "./emit-load.js";
import { engineShareOver } from "./engine-busy.js";
import { startHooklineSession } from "./hookline-session.js";
import { retryLateness, timelineProblem } from "./lateness.js";
import type { BackendKind, BenchOptions } from "./options.js";
import { pacedEmit } from "./paced-emit.js";
import type { ReceiverHandle } from "./receiver.js";
import { log } from "./run-support.js";
import { waitUntilNonePending } from "./verify.js";

/** The schedule under test: three short waits, no jitter, so each retry's due time is exact. */
export const RETRY_SCHEDULE_MS = [50, 100, 200];
const RETRY_ENV = {
  HOOKLINE_RETRY_SCHEDULE: RETRY_SCHEDULE_MS.map((ms) => `${ms}ms`).join(","),
  HOOKLINE_RETRY_JITTER: "0",
};

export interface RetryResult {
  backend: BackendKind;
  /** Lateness of every retry in ms, sorted: paced deliveries, then a burst. */
  paced: number[];
  burst: number[];
  pacedDeliveries: number;
  burstDeliveries: number;
  /** Embedded: the share of one core its database's thread took while each part ran. */
  pacedEngineShare: number | undefined;
  burstEngineShare: number | undefined;
}

/**
 * Every delivery fails with 500 until its last scheduled retry, which gets 200; measures how late
 * each retry starts, with new deliveries arriving at a steady rate and then all at once.
 */
export async function runRetryLateness(
  settings: TestSettings,
  kind: BackendKind,
  options: BenchOptions,
  receiver: ReceiverHandle,
): Promise<RetryResult> {
  // The standalone process serves /metrics: its database thread's busy time is read from there.
  const session = await startHooklineSession(settings, kind, options, receiver, (app) => ({
    ...RETRY_ENV,
    ...(app === "standalone" && { HOOKLINE_METRICS_ADDR: "127.0.0.1:0" }),
  }));
  let failed = true;
  try {
    const { emit, tenantId, attemptLog } = session;
    const requestsPer = RETRY_SCHEDULE_MS.length + 1;
    const metricsPort = session.processes[0]?.metricsPort;
    const measure = async (load: string, deliveries: number, send: () => Promise<unknown>) => {
      await receiver.reset();
      const reached = receiver.waitFor(deliveries * requestsPer);
      reached.catch(() => {});
      const engineShare = await engineShareOver(metricsPort, async () => {
        await send();
        await reached;
      });
      // Every delivery over before the timelines are read, so a late extra request shows too.
      await waitUntilNonePending(attemptLog, tenantId);
      const timelines = await receiver.timeline();
      const problem = timelineProblem(timelines, deliveries, requestsPer);
      if (problem) throw new Error(`retry lateness, ${kind}, ${load} load: ${problem}`);
      return { lateness: retryLateness(timelines, RETRY_SCHEDULE_MS), engineShare };
    };

    // Warm-up with plain 200s: connections open, each endpoint's queue consumed once.
    await receiver.failFirst(0);
    await receiver.reset();
    const warmed = receiver.waitFor(20 * options.endpoints);
    warmed.catch(() => {});
    await emitEvents(emit, { tenantId, prefix: "warm", count: 20, inFlight: 8 });
    await warmed;
    await receiver.failFirst(RETRY_SCHEDULE_MS.length);

    const perSecond = options.retryRate / options.endpoints;
    const pacedEvents = Math.max(1, Math.round(perSecond * options.retrySeconds));
    log(
      `retries: ${options.retryRate} new deliveries/s for ${options.retrySeconds} s, each failing ${RETRY_SCHEDULE_MS.length} times`,
    );
    const paced = await measure("paced", pacedEvents * options.endpoints, () =>
      pacedEmit(emit, { tenantId, prefix: "paced", perSecond, seconds: options.retrySeconds }),
    );
    const burstEvents = Math.max(1, Math.ceil(options.retryBurst / options.endpoints));
    log(`retries: a burst of ${burstEvents * options.endpoints} deliveries`);
    const burst = await measure("burst", burstEvents * options.endpoints, () =>
      emitEvents(emit, { tenantId, prefix: "burst", count: burstEvents, inFlight: options.emitConcurrency }),
    );
    failed = false;
    return {
      backend: kind,
      paced: paced.lateness,
      burst: burst.lateness,
      pacedDeliveries: pacedEvents * options.endpoints,
      burstDeliveries: burstEvents * options.endpoints,
      pacedEngineShare: paced.engineShare,
      burstEngineShare: burst.engineShare,
    };
  } finally {
    await receiver.failFirst(0);
    await session.close(failed);
  }
}
