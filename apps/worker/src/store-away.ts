import { isConnectionLost } from "@hookline/store";

/**
 * A job could not read its delivery because the store was unreachable: nothing was sent yet, so
 * the job waits for the store instead of failing (ConsumerOptions.isOutage). Only this counts as
 * an outage. An error after the request went out is a job failure like any other, so BullMQ's
 * retry cap still bounds how often a write that keeps failing sends the attempt again; and a
 * read that ran out of time is one too, since the loads of many queues' jobs share one statement
 * and a single slow one would otherwise pause them all.
 */
export class StoreAwayError extends Error {
  constructor(cause: unknown) {
    super(`the database is unavailable: ${cause instanceof Error ? cause.message : String(cause)}`, {
      cause,
    });
    this.name = "StoreAwayError";
  }
}

/** load, with a lost connection turned into StoreAwayError. */
export async function loadOrStoreAway<T>(load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    throw isConnectionLost(error) ? new StoreAwayError(error) : error;
  }
}
