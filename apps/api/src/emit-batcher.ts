import { Batcher } from "@hookline/batching";
import { type EmitResult, emitEvents, isConnectionError, type NewEvent, type StoreDb } from "@hookline/store";

/**
 * Emit statements in flight at once; each carries every call that arrived meanwhile. One, like
 * the worker's loads and records: measured on 2 cores against four in flight, in alternating
 * runs, batches grew and statements fell, and the whole machine did less per event. Servers
 * delivered 2,687 and 2,832/s against 2,463 and 2,480 (0.66–0.68 against 0.75–0.76 ms of CPU per
 * delivery); with the worker stopped, the api accepted 2,194–2,344 Emits/s against 1,858–1,946,
 * and a paced 1,000/s answered at p50 8 ms against 16. Embedded did not change beyond the noise.
 */
const IN_FLIGHT = 1;
const MAX_BATCH = 128;
/**
 * A statement still running after this long stops holding back the calls behind it, which start
 * the next statement beside it; at most four at once, the old number in flight. On an idle
 * machine the statement of one event to 1,000 endpoints took 16 ms and to 10,000 about 125 ms;
 * under a saturating load on 2 cores the statements' p99 was 20–42 ms (the longest 56), so load
 * rarely starts a second one, and a second one costs little (two in flight did better than four).
 */
const SLOW = { afterMs: 50, maxRunning: 4 };

/**
 * Group commit for Emit: concurrent calls share one store Emit (one statement) instead of one
 * each, with no timer (an idle api commits a lone call at once). Should a shared transaction
 * fail for a reason other than a lost database, each event is retried alone, so one bad event
 * fails only its own call.
 */
export function createEmitBatcher(db: StoreDb, now: () => Date): (event: NewEvent) => Promise<EmitResult> {
  const batcher = new Batcher<NewEvent, PromiseSettledResult<EmitResult>>(
    async (events) => {
      try {
        const results = await emitEvents(db, events, now());
        return results.map((value) => ({ status: "fulfilled", value }));
      } catch (error) {
        if (events.length === 1 || isConnectionError(error)) throw error;
        return Promise.allSettled(
          events.map(async (event) => (await emitEvents(db, [event], now()))[0] as EmitResult),
        );
      }
    },
    MAX_BATCH,
    IN_FLIGHT,
    SLOW,
  );
  return async (event) => {
    const outcome = await batcher.add(event);
    if (outcome.status === "rejected") throw outcome.reason;
    return outcome.value;
  };
}
