import { setTimeout as delay } from "node:timers/promises";
import type { DeliveryProducer, EnqueueItem } from "@hookline/queue";
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
  /**
   * How long a delivery found with no job must stay so, unchanged, before it is put back. A worker
   * records an attempt just after its job ends, and in between an answered attempt looks stranded.
   */
  confirmAfterMs: number;
}

/**
 * Puts back on their queue the pending deliveries that have no job (the process died between the
 * store commit and the queue add, or the queue lost its data), once they are still so, at the
 * same attempt, confirmAfterMs later. One process sweeps at a time.
 * Returns how many it re-enqueued, or undefined when another process holds the sweep.
 */
export async function sweepOnce(deps: SweeperDeps): Promise<number | undefined> {
  return deps.store.exclusively(async () => {
    const jobless = await findJobless(deps, () => true);
    if (jobless.size === 0) return 0;
    await delay(deps.confirmAfterMs);
    const stranded = await findJobless(deps, (key) => jobless.has(key));
    await deps.producer.enqueue([...stranded.values()]);
    return stranded.size;
  });
}

/** Overdue deliveries (of those `worth` checking) whose due attempt has no job, by `id#attempt`. */
async function findJobless(deps: SweeperDeps, worth: (key: string) => boolean) {
  const overdue = await deps.store.findOverdue(new Date(deps.now() - deps.graceMs), deps.batchSize ?? 500);
  const jobless = new Map<string, EnqueueItem>();
  for (const delivery of overdue) {
    const attemptNumber = delivery.attemptCount + 1;
    const key = `${delivery.id}#${attemptNumber}`;
    if (!worth(key) || (await deps.producer.hasJob(delivery, delivery.id, attemptNumber))) continue;
    jobless.set(key, {
      deliveryId: delivery.id,
      tenantId: delivery.tenantId,
      endpointId: delivery.endpointId,
      attemptNumber,
      ...(delivery.manual && { manual: true }),
    });
  }
  return jobless;
}
