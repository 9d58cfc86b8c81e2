import { type AttemptOutcome, verdictOf } from "./outcome.js";

/** When to retry: the wait after attempt N is scheduleMs[N-1], varied by ±jitter (0.2 = ±20%). */
export interface RetryPolicy {
  scheduleMs: readonly number[];
  jitter: number;
}

/**
 * The wait before the next attempt, or undefined when the delivery is finished (delivered, gone,
 * or no attempts left). A Retry-After is honoured but clamped between the scheduled wait and
 * twice it, so a receiver can slow us down without parking a delivery forever; then spread up to
 * `jitter` later, never earlier than asked, so that the deliveries one 429 or 503 answered do not
 * all come back in the same instant.
 */
export function retryDelayMs(
  policy: RetryPolicy,
  attemptNumber: number,
  outcome: AttemptOutcome,
  random: () => number,
): number | undefined {
  if (verdictOf(outcome) !== "retry") return undefined;
  const base = policy.scheduleMs[attemptNumber - 1];
  if (base === undefined) return undefined;
  if (outcome.kind === "response" && outcome.retryAfterMs !== undefined) {
    const asked = Math.min(Math.max(outcome.retryAfterMs, base), 2 * base);
    return Math.round(asked * (1 + policy.jitter * random()));
  }
  return Math.max(0, Math.round(base * (1 + policy.jitter * (2 * random() - 1))));
}
