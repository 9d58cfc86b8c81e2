import http from "node:http";
import { listenLocally } from "./local-server.js";

/** A receiver that answers 200 after delayMs, and counts what it holds at once. */
export interface SlowReceiver {
  readonly url: string;
  readonly state: {
    inFlight: number;
    maxInFlight: number;
    /** webhook-id of each request, in arrival order. */
    ids: string[];
    /** When each request arrived (ms since the epoch), in order. */
    arrivals: number[];
  };
  close(): Promise<void>;
}

export async function startSlowReceiver(delayMs: number): Promise<SlowReceiver> {
  const state = { inFlight: 0, maxInFlight: 0, ids: [] as string[], arrivals: [] as number[] };
  const server = http.createServer((req, res) => {
    state.inFlight += 1;
    state.maxInFlight = Math.max(state.maxInFlight, state.inFlight);
    state.ids.push(String(req.headers["webhook-id"]));
    state.arrivals.push(Date.now());
    req.resume();
    setTimeout(() => {
      state.inFlight -= 1;
      res.end("ok");
    }, delayMs);
  });
  return { state, ...(await listenLocally(server)) };
}
