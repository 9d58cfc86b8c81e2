import { Agent, request } from "undici";
import type { ReceiverHandle } from "./receiver.js";

/** The plain POST loop's result: what the receiver can take from one Node client. */
export interface CeilingResult {
  requests: number;
  seconds: number;
  perSecond: number;
}

/**
 * POSTs body to the receiver `requests` times over a pooled keep-alive Agent with `inFlight`
 * requests outstanding, after a short warm-up; the rate is what an ideal worker could reach.
 */
export async function measureCeiling(
  receiver: ReceiverHandle,
  body: string,
  { requests, inFlight = 64 }: { requests: number; inFlight?: number },
): Promise<CeilingResult> {
  const agent = new Agent({ connections: inFlight, keepAliveTimeout: 60_000 });
  try {
    const headers = { "content-type": "application/json" };
    const loop = async (count: number) => {
      let next = 0;
      const lane = async () => {
        while (next < count) {
          next += 1;
          const response = await request(receiver.url, { dispatcher: agent, method: "POST", headers, body });
          await response.body.dump();
          if (response.statusCode !== 200) throw new Error(`the receiver answered ${response.statusCode}`);
        }
      };
      await Promise.all(Array.from({ length: inFlight }, lane));
    };
    await loop(Math.min(2_000, requests)); // open the connections and warm the JIT
    await receiver.reset();
    const started = performance.now();
    await loop(requests);
    const seconds = (performance.now() - started) / 1000;
    const seen = await receiver.count();
    if (seen.count !== requests)
      throw new Error(`the receiver counted ${seen.count} of ${requests} requests`);
    return { requests, seconds, perSecond: requests / seconds };
  } finally {
    await agent.close();
  }
}
