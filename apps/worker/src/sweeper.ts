import { setTimeout as delay } from "node:timers/promises";
import type { DeliveryProducer, EndpointRef, EnqueueItem } from "@hookline/queue";
import {
  findOverdueDeliveries,
  type OverdueDelivery,
  type OverduePosition,
  runExclusively,
  type StoreDb,
} from "@hookline/store";

/** The store calls a sweep makes (the SQL stays in @hookline/store). */
export interface SweeperStore {
  /** Runs fn unless another process is sweeping, in which case it resolves undefined. */
  exclusively<T>(fn: () => Promise<T>): Promise<T | undefined>;
  /** Pending deliveries whose due attempt is older than dueBefore, in (due time, id) order after `after`. */
  findOverdue(
    dueBefore: Date,
    limit: number,
    after: OverduePosition | undefined,
  ): Promise<(OverdueDelivery & OverduePosition)[]>;
}

/** The sweeper's store on PostgreSQL: an advisory lock and one query. */
export function sweeperStore(db: StoreDb): SweeperStore {
  return {
    exclusively: (fn) => runExclusively(db, "sweeper", fn),
    findOverdue: (dueBefore, limit, after) => findOverdueDeliveries(db, dueBefore, limit, after),
  };
}

export interface SweeperDeps {
  store: SweeperStore;
  producer: Pick<DeliveryProducer, "enqueue" | "hasLiveJob" | "unpause">;
  now(): number;
  /** How overdue a pending delivery must be before it counts as stranded. */
  graceMs: number;
  /** Overdue deliveries per page of the walk (one read). */
  batchSize?: number;
  /**
   * Pages one sweep checks at most: 10 of 500 put back 5,000 deliveries a sweep after Redis lost
   * everything, and cost about 5,000 job lookups a sweep while a backlog that has jobs waits.
   */
  pagesPerSweep?: number;
  /** Where the walk through overdue deliveries goes on from: kept by the caller between sweeps. */
  walk: SweepWalk;
  /**
   * How long a delivery found with no job must stay so, unchanged, before it is put back. A worker
   * records an attempt just after its job ends, and in between an answered attempt looks stranded.
   */
  confirmAfterMs: number;
  /**
   * True while this process is still recording an answered attempt of the delivery: its job has
   * ended (and is gone), its row not yet written, so it looks stranded although it was sent.
   */
  recording?: (deliveryId: string) => boolean;
}

/**
 * The sweeps' place in the overdue deliveries. A sweep checks up to pagesPerSweep pages and the
 * next goes on after them, back to the start after a short page: overdue deliveries that do have
 * jobs (a backlog held back by an endpoint's limits) cannot hide a stranded one behind them for
 * good. A lap of the walk reads only what was overdue when it began (lapEnd): with a bound that
 * moved on with every sweep, a backlog falling due faster than sweeps read it never gave a short
 * page, and the walk never came back to a delivery that lost its job after it passed. With N
 * overdue at a lap's start, each is checked at least once every N / (batchSize * pagesPerSweep)
 * sweeps, plus one.
 */
export interface SweepWalk {
  after: OverduePosition | undefined;
  /** Due times this lap reads up to: set when a lap starts, cleared when it ends. */
  lapEnd?: Date | undefined;
}

/**
 * Puts back on their queue the pending deliveries that have no job (the process died between the
 * store commit and the queue add, or the queue lost its data), once they are still so, at the
 * same attempt, confirmAfterMs later. One process sweeps at a time.
 * Returns how many it re-enqueued, or undefined when another process holds the sweep.
 */
export async function sweepOnce(deps: SweeperDeps): Promise<number | undefined> {
  return deps.store.exclusively(async () => {
    const start = deps.walk.after;
    const lapEnd =
      (start !== undefined ? deps.walk.lapEnd : undefined) ?? new Date(deps.now() - deps.graceMs);
    const { jobless, last, waiting } = await findJobless(deps, start, lapEnd, () => true);
    // An overdue delivery whose job waits may wait on a queue a removal cut short left paused
    // (the delete of an endpoint whose id was taken again, with Redis away): resumed here, once
    // a sweep per queue, should CreateEndpoint not have managed it then.
    for (const endpoint of waiting.values()) await deps.producer.unpause(endpoint);
    let count = 0;
    if (jobless.size > 0) {
      await delay(deps.confirmAfterMs);
      const stranded = (await findJobless(deps, start, lapEnd, (key) => jobless.has(key))).jobless;
      await deps.producer.enqueue([...stranded.values()]);
      count = stranded.size;
    }
    // Only once they are back on their queues: a sweep that failed goes over the same pages again.
    deps.walk.after = last;
    deps.walk.lapEnd = last === undefined ? undefined : lapEnd;
    return count;
  });
}

/**
 * Overdue deliveries due before dueBefore and after `after`, up to pagesPerSweep pages (of those
 * `worth` checking), whose due attempt has no job, by `id#attempt`; the endpoints of those whose
 * job is there but waits; and where the next walk starts (undefined after a short page: the start).
 */
async function findJobless(
  deps: SweeperDeps,
  after: OverduePosition | undefined,
  dueBefore: Date,
  worth: (key: string) => boolean,
) {
  const limit = deps.batchSize ?? 500;
  const jobless = new Map<string, EnqueueItem>();
  const waiting = new Map<string, EndpointRef>();
  let last = after;
  for (let page = 0; page < (deps.pagesPerSweep ?? 10); page += 1) {
    const overdue = await deps.store.findOverdue(dueBefore, limit, last);
    for (const delivery of overdue) {
      const attemptNumber = delivery.attemptCount + 1;
      const key = `${delivery.id}#${attemptNumber}`;
      if (!worth(key) || deps.recording?.(delivery.id)) continue;
      if (await deps.producer.hasLiveJob(delivery, delivery.id, attemptNumber)) {
        waiting.set(`${delivery.tenantId}\u0000${delivery.endpointId}`, delivery);
        continue;
      }
      jobless.set(key, {
        deliveryId: delivery.id,
        tenantId: delivery.tenantId,
        endpointId: delivery.endpointId,
        attemptNumber,
        ...(delivery.manual && { manual: true }),
      });
    }
    const end = overdue.at(-1);
    if (overdue.length < limit || !end) return { jobless, waiting, last: undefined };
    last = { dueAt: end.dueAt, id: end.id };
  }
  return { jobless, waiting, last };
}
