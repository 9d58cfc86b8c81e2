import { emitEvents, quantile } from "./emit-load.js";
import { watchMachine } from "./machine-busy.js";
import { log } from "./run-support.js";
import type { ScaleOptions } from "./scale-options.js";
import type { ScaleProcesses } from "./scale-processes.js";
import type { ScaleReceiver } from "./scale-receiver.js";
import { timed } from "./timed.js";

export interface BacklogResult {
  asked: number;
  /** Deliveries queued for the slow endpoint (short of options.backlog when emitting ran out of time). */
  queued: number;
  emitSeconds: number;
  /** Emit sent to receipt, ms, sorted; probes that never arrived are left out. */
  latenciesMs: number[];
  lost: number;
  /** How busy the whole machine was while the probes ran (100 = one core). */
  machinePercent: number;
}

const TENANT = "backlog";
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const clock = () => performance.timeOrigin + performance.now();

/**
 * Queues options.backlog deliveries for one slow endpoint, then sends paced single deliveries to
 * another endpoint of the same tenant (subscribed to another event type) and times each one.
 */
export async function measureBacklog(
  hookline: ScaleProcesses,
  receiver: ScaleReceiver,
  options: ScaleOptions,
): Promise<BacklogResult> {
  await hookline.endpoints.createEndpoint({
    tenantId: TENANT,
    id: "slow",
    url: receiver.url("slow", `slow/${options.slowMs}`),
    eventTypes: ["backlog.filled"],
  });
  await hookline.endpoints.createEndpoint({
    tenantId: TENANT,
    id: "fresh",
    url: receiver.url("fresh"),
    eventTypes: ["probe.sent"],
  });
  await receiver.reset();

  log(`queueing ${options.backlog} deliveries for an endpoint that answers after ${options.slowMs} ms`);
  const started = performance.now();
  let queued = 0;
  await emitEvents(hookline.emit, {
    tenantId: TENANT,
    prefix: "fill",
    count: options.backlog,
    inFlight: 64,
    eventType: "backlog.filled",
    deadline: started + options.fillTimeoutMs,
    onEmitted: (deliveries) => {
      queued += deliveries;
    },
  });
  const emitSeconds = (performance.now() - started) / 1000;
  log(
    `${queued} queued in ${emitSeconds.toFixed(1)} s; ${options.probes} deliveries to another endpoint, ${options.probeGapMs} ms apart`,
  );

  const machineBusy = watchMachine();
  const sentAt = new Map<string, number>();
  for (let i = 0; i < options.probes; i++) {
    const name = `p${i}`;
    sentAt.set(name, clock());
    await hookline.emit.emit({
      tenantId: TENANT,
      eventId: `probe-${i}`,
      eventType: "probe.sent",
      dataJson: JSON.stringify({ probe: name }),
    });
    await sleep(options.probeGapMs);
  }
  await timed(receiver.waitFor("fresh", options.probes), performance.now(), 30_000);
  const machinePercent = machineBusy();
  const received = await receiver.probes();
  const latenciesMs = [...sentAt]
    .flatMap(([name, sent]) => (received[name] === undefined ? [] : [received[name] - sent]))
    .sort((a, b) => a - b);
  log(
    `probe latency p50 ${quantile(latenciesMs, 0.5).toFixed(0)} ms, p99 ${quantile(latenciesMs, 0.99).toFixed(0)} ms`,
  );
  // Cancels what is left of the backlog, so it does not weigh on later sections.
  await hookline.endpoints.deleteEndpoint({ tenantId: TENANT, id: "slow" });
  return {
    asked: options.backlog,
    queued,
    emitSeconds,
    latenciesMs,
    lost: options.probes - latenciesMs.length,
    machinePercent,
  };
}
