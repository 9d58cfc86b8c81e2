import type { FedQueue } from "@hookline/queue";

/**
 * News that jobs were added to queues, carried between processes as a NOTIFY payload. PostgreSQL
 * caps a payload below 8,000 bytes; longer news is sent as "" ("somewhere: look in the store").
 */
const MAX_PAYLOAD = 7000;

export function encodeWorkNews(fed: readonly FedQueue[]): string {
  const text = JSON.stringify(fed.map((f) => [f.queue, f.dueAt]));
  return text.length > MAX_PAYLOAD ? "" : text;
}

/** The queues named by a payload; undefined when it names none (look in the store). */
export function decodeWorkNews(payload: string): FedQueue[] | undefined {
  if (payload === "") return undefined;
  try {
    const pairs = JSON.parse(payload) as unknown;
    if (!Array.isArray(pairs)) return undefined;
    const fed: FedQueue[] = [];
    for (const pair of pairs) {
      if (!Array.isArray(pair) || typeof pair[0] !== "string" || typeof pair[1] !== "number")
        return undefined;
      fed.push({ queue: pair[0], dueAt: pair[1] });
    }
    return fed;
  } catch {
    return undefined;
  }
}
