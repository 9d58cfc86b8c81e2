import { withDeadline } from "./children.js";

/** What a timed wait came to: seconds taken, or the limit it ran past. */
export type Timed = { seconds: number } | { didNotFinishIn: number };

/** Waits for work at most timeoutMs; the clock started at startedAt (epoch ms, or performance.now()). */
export async function timed(
  work: Promise<unknown>,
  startedAt: number,
  timeoutMs: number,
  now: () => number = () => performance.now(),
): Promise<Timed> {
  try {
    await withDeadline(work, Math.max(0, timeoutMs - (now() - startedAt)), "timeout");
    return { seconds: (now() - startedAt) / 1000 };
  } catch (error) {
    const message = (error as Error).message;
    // A deadline of our own, or the RPC's (connect says "deadline_exceeded").
    if (message !== "timeout" && !message.includes("deadline")) throw error;
    return { didNotFinishIn: timeoutMs / 1000 };
  }
}

/** "12.3 s" or "did not finish in 120 s". */
export function timedText(result: Timed): string {
  return "seconds" in result
    ? `${result.seconds.toFixed(1)} s`
    : `did not finish in ${result.didNotFinishIn} s`;
}
