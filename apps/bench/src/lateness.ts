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
