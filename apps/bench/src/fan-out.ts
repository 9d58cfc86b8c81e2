import { DeliveryStatus } from "@hookline/contracts";
import { registerEndpoints } from "./register.js";
import { log } from "./run-support.js";
import type { ScaleOptions } from "./scale-options.js";
import type { ScaleProcesses } from "./scale-processes.js";
import type { ScaleReceiver } from "./scale-receiver.js";
import { type Timed, timed } from "./timed.js";
import { countDeliveries, waitUntilNonePending } from "./verify.js";

export interface FanOutResult {
  endpoints: number;
  stoppedBecause: string | undefined;
  /** Emit sent to its answer. */
  emit: Timed;
  /** Emit sent to the receiver's last request. */
  received: Timed;
  /** Emit sent to no delivery left pending. */
  recorded: Timed;
  delivered: number;
}

const TENANT = "fanout";

/** Registers the endpoints in one tenant, emits one event, and times until every delivery is done. */
export async function measureFanOut(
  hookline: ScaleProcesses,
  receiver: ScaleReceiver,
  options: ScaleOptions,
): Promise<FanOutResult> {
  const { endpoints, stoppedBecause } = await registerEndpoints(hookline.endpoints, {
    count: options.endpoints,
    tenants: [TENANT],
    url: (i) => `${receiver.url("fan")}/${i}`,
    guard: { pid: hookline.consumerPid, maxConnections: options.maxConnections, maxFds: options.maxFds },
    timeoutMs: options.phaseTimeoutMs,
  });
  await receiver.reset();
  log(`one Emit to ${endpoints.length} endpoints`);
  const started = performance.now();
  const arrived = receiver.waitFor("fan", endpoints.length);
  arrived.catch(() => {});
  // Bounded too: on code where every endpoint costs a consumer, one such Emit took minutes.
  const emitTimeoutMs = 3 * options.phaseTimeoutMs;
  const answer = hookline.emit.emit(
    { tenantId: TENANT, eventId: "fan-0", eventType: "invoice.paid", dataJson: "{}" },
    { timeoutMs: emitTimeoutMs },
  );
  answer.catch(() => {});
  const emit = await timed(answer, started, emitTimeoutMs + 1_000);
  if (!("seconds" in emit)) {
    const notDone = { didNotFinishIn: options.phaseTimeoutMs / 1000 };
    return {
      endpoints: endpoints.length,
      stoppedBecause,
      emit,
      received: notDone,
      recorded: notDone,
      delivered: Number.NaN,
    };
  }
  const response = await answer;
  if (response.deliveryIds.length !== endpoints.length) {
    throw new Error(
      `the fan-out Emit made ${response.deliveryIds.length} deliveries, not ${endpoints.length}`,
    );
  }
  const received = await timed(arrived, started, options.phaseTimeoutMs);
  const settled = waitUntilNonePending(hookline.attempts, TENANT, 250);
  settled.catch(() => {});
  const recorded = await timed(settled, started, options.phaseTimeoutMs);
  const counted = await countDeliveries(hookline.attempts, TENANT);
  const delivered = counted.byStatus.get(DeliveryStatus.DELIVERED) ?? 0;
  return { endpoints: endpoints.length, stoppedBecause, emit, received, recorded, delivered };
}
