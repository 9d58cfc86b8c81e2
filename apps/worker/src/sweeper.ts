import type { DeliveryProducer } from "@hookline/queue";
import { type Database, findOverdueDeliveries, LOCK_KEYS, withTryLock } from "@hookline/store";
import type { Kysely } from "kysely";

export interface SweeperDeps {
  db: Kysely<Database>;
  producer: Pick<DeliveryProducer, "enqueue" | "hasJob">;
  now(): number;
  /** How overdue a pending delivery must be before it counts as stranded. */
  graceMs: number;
  batchSize?: number;
}

/**
 * Puts back on their queue the pending deliveries that have no job (the process died between the
 * store commit and the queue add, or the queue lost its data). One process sweeps at a time.
 * Returns how many it re-enqueued, or undefined when another process holds the sweep.
 */
export async function sweepOnce(deps: SweeperDeps): Promise<number | undefined> {
  return withTryLock(deps.db, LOCK_KEYS.sweeper, async () => {
    const overdue = await findOverdueDeliveries(
      deps.db,
      new Date(deps.now() - deps.graceMs),
      deps.batchSize ?? 500,
    );
    const stranded = [];
    for (const delivery of overdue) {
      const attemptNumber = delivery.attemptCount + 1;
      if (!(await deps.producer.hasJob(delivery, delivery.id, attemptNumber))) {
        stranded.push({
          deliveryId: delivery.id,
          tenantId: delivery.tenantId,
          endpointId: delivery.endpointId,
          attemptNumber,
          delayMs: 0,
        });
      }
    }
    await deps.producer.enqueue(stranded);
    return stranded.length;
  });
}
