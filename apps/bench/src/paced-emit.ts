import type { Client } from "@connectrpc/connect";
import type { EmitService } from "@hookline/contracts";
import { DATA_JSON } from "./emit-load.js";

export interface PacedResult {
  /** Emit RPC latencies in ms (sent to answered), sorted. */
  latenciesMs: number[];
  /** Seconds from the first Emit sent to the last one sent: longer than planned when the client fell behind. */
  sendSeconds: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Sends perSecond × seconds Emits on a fixed schedule (open loop: an Emit is sent when due, however
 * many are still unanswered), so a slow answer shows as latency rather than as a slower schedule.
 */
export async function pacedEmit(
  client: Client<typeof EmitService>,
  {
    tenantId,
    prefix,
    perSecond,
    seconds,
  }: { tenantId: string; prefix: string; perSecond: number; seconds: number },
): Promise<PacedResult> {
  const count = Math.max(1, Math.round(perSecond * seconds));
  const latenciesMs: number[] = [];
  const answers: Promise<void>[] = [];
  const send = async (i: number) => {
    const sent = performance.now();
    await client.emit({
      tenantId,
      eventId: `${prefix}-${i}`,
      eventType: "invoice.paid",
      dataJson: DATA_JSON,
    });
    latenciesMs.push(performance.now() - sent);
  };
  const start = performance.now();
  let next = 0;
  let lastSent = start;
  while (next < count) {
    const due = Math.min(count, Math.floor(((performance.now() - start) * perSecond) / 1000) + 1);
    while (next < due) answers.push(send(next++));
    lastSent = performance.now();
    await sleep(Math.max(0, start + (next * 1000) / perSecond - performance.now()));
  }
  await Promise.all(answers);
  latenciesMs.sort((a, b) => a - b);
  return { latenciesMs, sendSeconds: (lastSent - start) / 1000 };
}
