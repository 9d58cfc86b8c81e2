import type { Logger } from "@hookline/runtime";

/** How often, at most, a coalesced warning is logged: one line, then a count per window. */
const WINDOW_MS = 60_000;

/**
 * A warning that a flood must not turn into a flood of lines: the first of a quiet spell is
 * logged as it comes (`first`, with its fields), and those that follow within the window as one
 * line when it ends (`more`, with their count and the last one's fields).
 */
export function coalescedWarning(
  log: Logger,
  first: string,
  more: string,
  /** Runs fn after ms (tests pass their own, to end windows when they choose). */
  schedule: (fn: () => void, ms: number) => void = (fn, ms) => setTimeout(fn, ms).unref(),
): (fields: Record<string, unknown>) => void {
  let windowOpen = false;
  let count = 0;
  let last: Record<string, unknown> = {};
  const endWindow = () => {
    if (count === 0) {
      windowOpen = false;
      return;
    }
    log.warn(more, { count, window_s: WINDOW_MS / 1000, last });
    count = 0;
    // They kept coming: the next window counts too, rather than logging the next one alone.
    schedule(endWindow, WINDOW_MS);
  };
  return (fields) => {
    if (windowOpen) {
      count += 1;
      last = fields;
      return;
    }
    log.warn(first, fields);
    windowOpen = true;
    schedule(endWindow, WINDOW_MS);
  };
}
