import { codeToString } from "@connectrpc/connect/protocol-connect";
import type { Logger } from "@hookline/runtime";
import type { RefusalListener } from "./grpc-unary.js";

/** How often, at most, refused calls are logged: one line, then a count per window. */
const WINDOW_MS = 60_000;

/**
 * Logs calls refused from their headers (no token, an unknown one, a link used out of bounds), so
 * that someone guessing tokens shows in the log and not only in a counter. A flood must not bury
 * the log: the first refusal of a quiet spell is logged as it comes, and those that follow within
 * the window are logged as one count when it ends. The reason is the text the caller was told; no
 * token ever appears in it.
 */
export function logRefusals(
  log: Logger,
  /** Runs fn after ms (tests pass their own, to end windows when they choose). */
  schedule: (fn: () => void, ms: number) => void = (fn, ms) => setTimeout(fn, ms).unref(),
): RefusalListener {
  let windowOpen = false;
  let more = 0;
  let last: Record<string, unknown> = {};
  const endWindow = () => {
    if (more === 0) {
      windowOpen = false;
      return;
    }
    log.warn("more calls refused", { count: more, window_s: WINDOW_MS / 1000, last });
    more = 0;
    // Refusals kept coming: the next window counts too, rather than logging the next one alone.
    schedule(endWindow, WINDOW_MS);
  };
  return (method, error, peer) => {
    const call = { method, code: codeToString(error.code), reason: error.rawMessage, peer: peer ?? "" };
    if (windowOpen) {
      more += 1;
      last = call;
      return;
    }
    log.warn("call refused", call);
    windowOpen = true;
    schedule(endWindow, WINDOW_MS);
  };
}
