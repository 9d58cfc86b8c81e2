import { setTimeout as sleep } from "node:timers/promises";
import { type Client, Code, ConnectError } from "@connectrpc/connect";
import type { Attempt, AttemptLogService, WatchAttemptsRequest } from "@hookline/contracts";
import type { HooklineClient } from "./client.js";

/** Filters and resume cursor of a watch; every field is optional. */
export type WatchRequest = Partial<
  Pick<WatchAttemptsRequest, "tenantId" | "endpointId" | "eventId" | "afterAttemptId">
>;

/** Why and when a watch reconnects; passed to `onReconnect` before it waits. */
export interface ReconnectInfo {
  /** Consecutive reconnects without an attempt received in between (1 for the first). */
  retry: number;
  delayMs: number;
  /** The cursor the next stream resumes after (the last id yielded, or the caller's start). */
  afterAttemptId: bigint;
  /** The error that ended the stream; undefined when the server ended it without one. */
  error: ConnectError | undefined;
}

export interface WatchOptions {
  /** Aborting ends the iteration quietly. */
  signal?: AbortSignal | undefined;
  onReconnect?: ((info: ReconnectInfo) => void) | undefined;
  /** First wait before reconnecting; doubles on each consecutive failure. Default 100 ms. */
  initialBackoffMs?: number | undefined;
  /** Longest wait between reconnects. Default 5 s. */
  maxBackoffMs?: number | undefined;
  /** Called each time a stream is live (its headers came), with the id it carries attempts after. */
  onLive?: ((afterAttemptId: bigint) => void) | undefined;
}

/** The response header naming the id a stream starts after (with 0 asked: the newest one). */
const AFTER_ATTEMPT_ID_HEADER = "hookline-after-attempt-id";

// Codes that mean "this stream is gone, the service may well not be": a dropped connection, a
// server shutting down, or a consumer that fell behind (the server asks it to resume). CANCELED
// counts too when the caller did not abort: connect-node reports a connection cut under an open
// stream as an HTTP/2 CANCEL, and ABORTED: it reports a connection reset (ECONNRESET) so.
const RESUMABLE: ReadonlySet<Code> = new Set([
  Code.Aborted,
  Code.Unavailable,
  Code.Internal,
  Code.ResourceExhausted,
  Code.Canceled,
]);

/**
 * Follows WatchAttempts, reconnecting after a dropped or ended stream with the last id it yielded as
 * `after_attempt_id`, so the caller sees every matching attempt exactly once, in id order. Other
 * errors (INVALID_ARGUMENT, UNAUTHENTICATED, ...) are thrown.
 *
 * Starting without a cursor means "from now on": the first stream's header says which id that is,
 * and it becomes the cursor, so a stream that drops before its first attempt still resumes with
 * those recorded meanwhile.
 */
export async function* watchAttempts(
  client: HooklineClient | Client<typeof AttemptLogService>,
  request: WatchRequest = {},
  options: WatchOptions = {},
): AsyncGenerator<Attempt, void, undefined> {
  const log = "log" in client ? client.log : client;
  const { signal, onReconnect, onLive } = options;
  const initialMs = options.initialBackoffMs ?? 100;
  const maxMs = options.maxBackoffMs ?? 5_000;
  let cursor = request.afterAttemptId ?? 0n;
  let retry = 0;
  while (!signal?.aborted) {
    let error: ConnectError | undefined;
    // Each stream gets its own signal, aborted however this generator ends (the caller's abort, a
    // `break` out of the loop, an error), so the call never outlives it.
    const call = new AbortController();
    const forward = () => call.abort();
    signal?.addEventListener("abort", forward, { once: true });
    try {
      const onHeader = (headers: Headers) => {
        // Only a stream that is live carries it: a refusal over Connect also comes with headers.
        const startsAfter = headers.get(AFTER_ATTEMPT_ID_HEADER);
        if (startsAfter === null || !/^\d{1,19}$/.test(startsAfter)) return;
        if (cursor === 0n) cursor = BigInt(startsAfter);
        onLive?.(cursor);
      };
      const stream = log.watchAttempts(
        { ...request, afterAttemptId: cursor },
        { signal: call.signal, onHeader },
      );
      for await (const { attempt } of stream) {
        // The server promises increasing ids; the check keeps "exactly once" even across a seam.
        if (!attempt || attempt.id <= cursor) continue;
        cursor = attempt.id;
        retry = 0;
        yield attempt;
      }
    } catch (thrown) {
      if (signal?.aborted) return;
      error = ConnectError.from(thrown);
      if (!RESUMABLE.has(error.code)) throw error;
    } finally {
      signal?.removeEventListener("abort", forward);
      call.abort();
    }
    if (signal?.aborted) return;
    retry += 1;
    const delayMs = Math.min(maxMs, initialMs * 2 ** Math.min(retry - 1, 30));
    onReconnect?.({ retry, delayMs, afterAttemptId: cursor, error });
    try {
      await sleep(delayMs, undefined, { signal });
    } catch {
      return; // aborted while waiting
    }
  }
}
