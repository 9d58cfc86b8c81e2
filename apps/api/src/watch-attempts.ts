import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";
import type { WatchAttemptsRequest, WatchAttemptsResponse } from "@hookline/contracts";
import { type AttemptFilter, attemptsAfter } from "@hookline/store";
import { FeedOverflowError } from "./attempt-feed.js";
import { attemptIdForStore, attemptIdFromStore } from "./attempt-id.js";
import { endpointFor, linkSince, principalKey, tenantFor } from "./auth.js";
import { attemptMessage } from "./convert.js";
import type { ApiDeps } from "./deps.js";
import { sendHeadersNow } from "./early-headers.js";
import { toConnectError } from "./errors.js";
import { linkEndpointWatch } from "./link-endpoint.js";
import { linkExpiredMessage } from "./portal-token.js";
import { InvalidArgumentError, optionalId } from "./validate.js";

// A backfill page is held while the client reads it, so it is sized by bytes, not rows: a stalled
// stream holds at most about this much (attempt bodies are at most maxResponseBytes each).
const BACKFILL_BYTES = 128 * 1024;
const MAX_BACKFILL_ROWS = 500;
// Ids, timestamps, the error text and the message envelope of one attempt, roughly.
const ATTEMPT_OVERHEAD_BYTES = 1024;

/** Rows per backfill page so that a page stays within BACKFILL_BYTES. */
export function backfillRows(maxResponseBytes: number): number {
  const perRow = maxResponseBytes + ATTEMPT_OVERHEAD_BYTES;
  return Math.max(1, Math.min(MAX_BACKFILL_ROWS, Math.floor(BACKFILL_BYTES / perRow)));
}

/** Response header: the stream carries every matching attempt with an id above this one. */
export const AFTER_ATTEMPT_ID_HEADER = "hookline-after-attempt-id";

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
  let filter: AttemptFilter;
  let release: () => void;
  try {
    release = deps.streams.acquire(context.values.get(principalKey));
  } catch (error) {
    throw toConnectError(error, deps.log, "WatchAttempts");
  }
  // A portal link's stream ends when the link expires, as every later call on it is refused then.
  // Its timer starts only once the stream has its slot: a refused stream leaves none behind.
  const expiry = linkExpiry(context.values.get(principalKey).expiresAt, deps.now());
  const signal = expiry ? AbortSignal.any([context.signal, expiry.signal]) : context.signal;
  try {
    if (req.afterAttemptId < 0n) throw new InvalidArgumentError("after_attempt_id", "must not be negative");
    filter = {
      tenantId: optionalId("tenant_id", tenantFor(context, req.tenantId)),
      endpointId: optionalId("endpoint_id", endpointFor(context, req.endpointId)),
      eventId: optionalId("event_id", req.eventId),
      ...(linkSince(context) && { startedFrom: linkSince(context) }),
    };
  } catch (error) {
    expiry?.clear();
    release();
    throw toConnectError(error, deps.log, "WatchAttempts");
  }
  // A link's endpoint deleted while the stream is open ends it, before a new endpoint given the
  // same id could feed it.
  const stillTheLinks = linkEndpointWatch(deps.db, context.values.get(principalKey));
  const pageRows = backfillRows(deps.maxResponseBytes);
  const feed = deps.attemptFeed;
  let live: Awaited<ReturnType<typeof feed.subscribe>>;
  try {
    live = await feed.subscribe(filter, signal);
  } catch (error) {
    expiry?.clear();
    release();
    throw toConnectError(error, deps.log, "WatchAttempts");
  }
  let cursor = req.afterAttemptId > 0n ? req.afterAttemptId : feed.lastId;
  // The stream is live from here: say so, and say where it starts, so that a client that opened
  // it "from now" can resume from this id before any attempt has arrived.
  context.responseHeader.set(AFTER_ATTEMPT_ID_HEADER, cursor.toString());
  sendHeadersNow(context);
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
      const page = await attemptsAfter(deps.db, filter, attemptIdForStore(cursor), pageRows);
      const rows = page.length;
      // Hand each row over and drop it, so a stalled client pins at most what is left of the page.
      for (let attempt = page.shift(); attempt; attempt = page.shift()) {
        cursor = attemptIdFromStore(attempt.id);
        await stillTheLinks?.(attempt.startedAt);
        yield { attempt: attemptMessage(attempt) };
      }
      // A short page read everything committed when it started, which includes coveredUpTo.
      scanned = rows < pageRows ? (cursor > coveredUpTo ? cursor : coveredUpTo) : cursor;
    }
    for await (const attempt of live) {
      const id = attemptIdFromStore(attempt.id);
      if (id <= cursor) continue;
      cursor = id;
      await stillTheLinks?.(attempt.startedAt);
      yield { attempt: attemptMessage(attempt) };
    }
    if (expiry?.signal.aborted && !context.signal.aborted) throw expiry.error();
  } catch (error) {
    if (error instanceof FeedOverflowError) {
      throw new ConnectError(
        `${error.message}; reconnect with after_attempt_id=${cursor} to resume`,
        Code.ResourceExhausted,
      );
    }
    // Errors raised while streaming bypass the unary interceptor: map them here.
    throw toConnectError(error, deps.log, "WatchAttempts");
  } finally {
    expiry?.clear();
    live.close();
    release();
  }
}

/** Aborts when a portal link expires (undefined for callers whose access does not expire). */
function linkExpiry(expiresAt: Date | undefined, now: Date) {
  if (expiresAt === undefined) return undefined;
  const controller = new AbortController();
  // Links live at most days, well within a timer's range.
  const timer = setTimeout(() => controller.abort(), Math.max(0, expiresAt.getTime() - now.getTime()));
  return {
    signal: controller.signal,
    clear: () => clearTimeout(timer),
    error: () => new ConnectError(linkExpiredMessage(expiresAt), Code.Unauthenticated),
  };
}
