import type { DeliveryProducer } from "@hookline/queue";
import { findOverdueDeliveries, type OverdueDelivery, runExclusively, type StoreDb } from "@hookline/store";

/** The store calls a sweep makes (the SQL stays in @hookline/store). */
export interface SweeperStore {
  /** Runs fn unless another process is sweeping, in which case it resolves undefined. */
  exclusively<T>(fn: () => Promise<T>): Promise<T | undefined>;
  /** Pending deliveries whose due attempt is older than dueBefore, oldest first. */
  findOverdue(dueBefore: Date, limit: number): Promise<OverdueDelivery[]>;
}

/** The sweeper's store on PostgreSQL: an advisory lock and one query. */
export function sweeperStore(db: StoreDb): SweeperStore {
  return {
    exclusively: (fn) => runExclusively(db, "sweeper", fn),
    findOverdue: (dueBefore, limit) => findOverdueDeliveries(db, dueBefore, limit),
  };
}

export interface SweeperDeps {
  store: SweeperStore;
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
  return deps.store.exclusively(async () => {
    const overdue = await deps.store.findOverdue(new Date(deps.now() - deps.graceMs), deps.batchSize ?? 500);
    const stranded = [];
    for (const delivery of overdue) {
      const attemptNumber = delivery.attemptCount + 1;
      if (!(await deps.producer.hasJob(delivery, delivery.id, attemptNumber))) {
        stranded.push({
          deliveryId: delivery.id,
          tenantId: delivery.tenantId,
          endpointId: delivery.endpointId,
          attemptNumber,
        });
      }
    }
    await deps.producer.enqueue(stranded);
    return stranded.length;
  });
}
