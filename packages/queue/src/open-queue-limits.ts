import type { OpenQueue } from "./open-queue.js";
import type { QueueLimits } from "./routing.js";

/** OpenQueue.limitsGeneration before the open's first write has landed. */
export const LIMITS_UNWRITTEN = -1;
/** OpenQueue.limitsGeneration after a write of the limits failed. */
export const LIMITS_FAILED = -2;

/** At least this often a queue whose limits move has its rate written again (see rateInPlace). */
const RATE_REWRITE_MS = 30_000;

/**
 * Whether an open queue's next write of its limits may leave the rate as it is. A learned limit
 * moves several times a second (a flaky endpoint's: once per five attempts or so), and a write of
 * the unchanged rate with each move cost a statement on the embedded PGlite's one session, and put
 * back a rate the api had just replaced until the workers heard of it. So the rate is left while
 * this process's last write of it stands (it did not fail, the open's first write has landed, the
 * backend did not lose it: `generation` is the backend's now) and is recent: written again once in
 * RATE_REWRITE_MS of such moves, a rate lost without notice (a queue removed and made again, a
 * write the adaptive limits dropped as superseded) comes back.
 */
export function rateInPlace(open: OpenQueue, limits: QueueLimits, generation: number, now: number): boolean {
  return (
    open.limitsGeneration === generation &&
    open.limits.ratePerSecond === limits.ratePerSecond &&
    now - open.rateWrittenAt < RATE_REWRITE_MS
  );
}
