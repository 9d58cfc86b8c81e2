import type { RequestTimes } from "./receiver-protocol.js";

/**
 * How late each retry started, in ms: its arrival at the receiver minus (the previous attempt's
 * answer + the scheduled wait), sorted. Both times are the receiver's, so no clocks are compared
 * across processes; the previous answer is sent slightly before the sender reads it, so the
 * figure leans late by the loopback's latency (well under a millisecond).
 */
export function retryLateness(
  deliveries: readonly RequestTimes[][],
  scheduleMs: readonly number[],
): number[] {
  const lateness: number[] = [];
  for (const requests of deliveries) {
    const ordered = [...requests].sort((a, b) => a[0] - b[0]);
    for (let i = 1; i < ordered.length && i <= scheduleMs.length; i++) {
      const [arrivedAt] = ordered[i] as RequestTimes;
      const [, previousAnsweredAt] = ordered[i - 1] as RequestTimes;
      lateness.push(arrivedAt - (previousAnsweredAt + (scheduleMs[i - 1] ?? 0)));
    }
  }
  return lateness.sort((a, b) => a - b);
}

/**
 * Why a run's timelines cannot be read as its retries, or undefined when every one of the
 * expected deliveries got exactly `requestsPer` requests. retryLateness reads only the first
 * `requestsPer` of each; a duplicate or an extra retry beyond them would go unseen, and a
 * delivery short of them would leave a retry out, so the run fails instead.
 */
export function timelineProblem(
  deliveries: readonly RequestTimes[][],
  expectedDeliveries: number,
  requestsPer: number,
): string | undefined {
  const wrong = deliveries.map((requests) => requests.length).filter((n) => n !== requestsPer);
  const problems: string[] = [];
  if (deliveries.length !== expectedDeliveries)
    problems.push(`the receiver saw ${deliveries.length} deliveries, not ${expectedDeliveries}`);
  if (wrong.length > 0) {
    const counts = new Map<number, number>();
    for (const n of wrong) counts.set(n, (counts.get(n) ?? 0) + 1);
    const detail = [...counts]
      .sort((a, b) => a[0] - b[0])
      .map(([n, times]) => `${times} with ${n}`)
      .join(", ");
    problems.push(`${wrong.length} deliveries did not get exactly ${requestsPer} requests (${detail})`);
  }
  return problems.length > 0 ? problems.join("; ") : undefined;
}
