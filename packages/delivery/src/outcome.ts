/** What one HTTP attempt produced: the receiver's answer, or why there was none. */
export type AttemptOutcome =
  | { kind: "response"; status: number; body: string; retryAfterMs: number | undefined; durationMs: number }
  | {
      kind: "error";
      error: string;
      durationMs: number;
      /** Nothing was sent: the URL's address is one deliveries may not reach (the SSRF guard). */
      blocked?: true;
      /** No answer (or no connection) within the delivery timeout. */
      timedOut?: true;
    };

/** What to do with a delivery after an attempt. */
export type Verdict = "delivered" | "gone" | "retry" | "blocked";

/**
 * 2xx is delivered, 410 means the endpoint is gone, an address the SSRF guard refused is
 * blocked, anything else (3xx, 4xx, 5xx, no answer) is retried.
 *
 * A blocked delivery fails at once instead of being retried: the refusal is our own policy, not
 * a fault of the receiver that time may cure, so retrying would only turn the worker into a
 * periodic prober of internal names (one DNS lookup per attempt, per delivery) while the customer
 * waits hours for the final "failed". The attempt row already says why, and fixing the URL or
 * the DNS record and retrying the delivery is the customer's move.
 */
export function verdictOf(outcome: AttemptOutcome): Verdict {
  if (outcome.kind === "error") return outcome.blocked ? "blocked" : "retry";
  if (outcome.status >= 200 && outcome.status < 300) return "delivered";
  if (outcome.status === 410) return "gone";
  return "retry";
}

/**
 * What an attempt says about the receiver's load, for the adaptive concurrency limit: a 2xx is a
 * calm answer (its latency counts); 429 and a timeout say it is overloaded (a timeout also held a
 * slot for the whole deadline); a 5xx or a refused, reset or cut connection is a failure, which
 * may be load or the endpoint's own fault (the limiter tells them apart by how often it happens
 * with fewer in flight); anything else (a 404, a refused address) says nothing about load.
 */
export function loadSignalOf(outcome: AttemptOutcome): "ok" | "overload" | "failure" | "neutral" {
  if (outcome.kind === "error") {
    if (outcome.blocked) return "neutral";
    return outcome.timedOut ? "overload" : "failure";
  }
  if (outcome.status >= 200 && outcome.status < 300) return "ok";
  if (outcome.status === 429) return "overload";
  if (outcome.status >= 500) return "failure";
  return "neutral";
}
