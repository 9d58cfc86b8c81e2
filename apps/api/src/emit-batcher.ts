import { Batcher } from "@hookline/batching";
import { type EmitResult, emitEvents, isConnectionError, type NewEvent, type StoreDb } from "@hookline/store";

/** Emit transactions in flight at once; each carries every call that arrived meanwhile. */
const IN_FLIGHT = 4;
const MAX_BATCH = 128;

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
  );
  return async (event) => {
    const outcome = await batcher.add(event);
    if (outcome.status === "rejected") throw outcome.reason;
    return outcome.value;
  };
}
