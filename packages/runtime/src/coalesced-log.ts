/** How often, at most, a coalesced line is logged: one line, then a count per window. */
const WINDOW_MS = 60_000;

/**
 * A log line that a flood must not turn into a flood of lines (a queue outage, a token guesser):
 * the first of a quiet spell is written as it comes (`first`, with its fields), and those that
 * follow within the window as one line when it ends (`more`, with their count and the last one's
 * fields). `write` is the logger's method for the level, e.g. `(m, f) => log.warn(m, f)`.
 */
export function coalescedLog(
  write: (message: string, fields: Record<string, unknown>) => void,
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
    write(more, { count, window_s: WINDOW_MS / 1000, last });
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
    write(first, fields);
    windowOpen = true;
    schedule(endWindow, WINDOW_MS);
  };
}
