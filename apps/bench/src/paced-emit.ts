import { DATA_JSON, type EmitClient } from "./emit-load.js";

export interface PacedResult {
  /** Emit latencies in ms, from the moment each Emit was due to its answer, sorted. */
  latenciesMs: number[];
  /** Seconds from the first Emit sent to the last one sent: longer than planned when the client fell behind. */
  sendSeconds: number;
}

/**
 * Below the api's default of 100 HTTP/2 streams per connection: more at once on the one connection
 * are refused (NGHTTP2_ENHANCE_YOUR_CALM).
 */
const MAX_IN_FLIGHT = 96;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Sends perSecond × seconds Emits on a fixed schedule. Each latency runs from when the Emit was
 * due, not when it was sent, so an Emit that waited for one of the MAX_IN_FLIGHT slots counts the
 * wait: a slow server shows as latency, not as a slower schedule.
 */
export async function pacedEmit(
  client: Pick<EmitClient, "emit">,
  {
    tenantId,
    prefix,
    perSecond,
    seconds,
  }: { tenantId: string; prefix: string; perSecond: number; seconds: number },
): Promise<PacedResult> {
  const count = Math.max(1, Math.round(perSecond * seconds));
  const latenciesMs: number[] = [];
  const answers = new Set<Promise<void>>();
  const start = performance.now();
  const dueAt = (i: number) => start + (i * 1000) / perSecond;
  const send = (i: number) => {
    const answer = client
      .emit({ tenantId, eventId: `${prefix}-${i}`, eventType: "invoice.paid", dataJson: DATA_JSON })
      .then(() => {
        latenciesMs.push(performance.now() - dueAt(i));
        answers.delete(answer);
      });
    answers.add(answer);
  };
  let next = 0;
  let lastSent = start;
  while (next < count) {
    const due = Math.min(count, Math.floor(((performance.now() - start) * perSecond) / 1000) + 1);
    while (next < due) {
      if (answers.size >= MAX_IN_FLIGHT) await Promise.race(answers);
      send(next++);
    }
    lastSent = performance.now();
    await sleep(Math.max(0, dueAt(next) - performance.now()));
  }
  await Promise.all(answers);
  latenciesMs.sort((a, b) => a - b);
  return { latenciesMs, sendSeconds: (lastSent - start) / 1000 };
}
