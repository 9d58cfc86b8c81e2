/** What one HTTP attempt produced: the receiver's answer, or why there was none. */
export type AttemptOutcome =
  | { kind: "response"; status: number; body: string; retryAfterMs: number | undefined; durationMs: number }
  | { kind: "error"; error: string; durationMs: number };

/** What to do with a delivery after an attempt. */
export type Verdict = "delivered" | "gone" | "retry";

/** 2xx is delivered, 410 means the endpoint is gone, anything else (3xx, 4xx, 5xx, no answer) is retried. */
export function verdictOf(outcome: AttemptOutcome): Verdict {
  if (outcome.kind === "error") return "retry";
  if (outcome.status >= 200 && outcome.status < 300) return "delivered";
  if (outcome.status === 410) return "gone";
  return "retry";
}
