import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";
import type { WatchAttemptsRequest, WatchAttemptsResponse } from "@hookline/contracts";
import { listAttemptsAfter } from "@hookline/store";
import { FeedOverflowError } from "./attempt-feed.js";
import { endpointFor, tenantFor } from "./auth.js";
import { attemptMessage } from "./convert.js";
import type { ApiDeps } from "./deps.js";
import { toConnectError } from "./errors.js";
import { InvalidArgumentError, optionalId } from "./validate.js";

const BACKFILL_PAGE = 500;

/**
 * Streams attempts in id order: first those after the client's cursor from the store, then live
 * ones from the feed, with no gap and no duplicate at the seam (the cursor drops anything the
 * backfill already sent).
 */
export async function* watchAttempts(
  deps: ApiDeps,
  req: WatchAttemptsRequest,
  context: HandlerContext,
): AsyncGenerator<Partial<WatchAttemptsResponse>> {
  const signal = context.signal;
  let filter: { tenantId: string; endpointId: string; eventId: string };
  try {
    if (req.afterAttemptId < 0n) throw new InvalidArgumentError("after_attempt_id", "must not be negative");
    filter = {
      tenantId: optionalId("tenant_id", tenantFor(context, req.tenantId)),
      endpointId: optionalId("endpoint_id", endpointFor(context, req.endpointId)),
      eventId: optionalId("event_id", req.eventId),
    };
  } catch (error) {
    throw toConnectError(error, deps.log);
  }
  const feed = deps.attemptFeed;
  const live = await feed.subscribe(filter, signal);
  let cursor = req.afterAttemptId > 0n ? req.afterAttemptId : feed.lastId;
  try {
    // Catch up from the store until it has covered everything the feed has handed out, then
    // switch to live in the same tick as that check, so no attempt falls between the two.
    let scanned = cursor;
    while (!signal.aborted) {
      if (scanned >= feed.lastId) {
        live.goLive(cursor);
        break;
      }
      const coveredUpTo = feed.lastId;
      const page = await listAttemptsAfter(deps.db, filter, cursor.toString(), BACKFILL_PAGE);
      for (const attempt of page) {
        cursor = BigInt(attempt.id);
        yield { attempt: attemptMessage(attempt) };
      }
      // A short page read everything committed when it started, which includes coveredUpTo.
      scanned = page.length < BACKFILL_PAGE ? (cursor > coveredUpTo ? cursor : coveredUpTo) : cursor;
    }
    for await (const attempt of live) {
      const id = BigInt(attempt.id);
      if (id <= cursor) continue;
      cursor = id;
      yield { attempt: attemptMessage(attempt) };
    }
  } catch (error) {
    if (error instanceof FeedOverflowError) {
      throw new ConnectError(
        `${error.message}; reconnect with after_attempt_id=${cursor} to resume`,
        Code.ResourceExhausted,
      );
    }
    // Errors raised while streaming bypass the unary interceptor: map them here.
    throw toConnectError(error, deps.log);
  } finally {
    live.close();
  }
}
