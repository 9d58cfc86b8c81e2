import http from "node:http";
import { listenLocally } from "./local-server.js";

/** How a LoadReceiver answers a request that arrives with n in flight (itself included). */
export type LoadReply = { status: number; delayMs: number } | "hang";

/** A receiver whose answers depend on its load: how many requests it holds at once. */
export interface LoadReceiver {
  readonly url: string;
  readonly state: { inFlight: number; maxInFlight: number; received: number };
  close(): Promise<void>;
}

export async function startLoadReceiver(reply: (n: number) => LoadReply): Promise<LoadReceiver> {
  const state = { inFlight: 0, maxInFlight: 0, received: 0 };
  const server = http.createServer((req, res) => {
    state.inFlight += 1;
    state.received += 1;
    state.maxInFlight = Math.max(state.maxInFlight, state.inFlight);
    // A request the client gave up on (a timeout) no longer counts.
    res.on("close", () => {
      state.inFlight -= 1;
    });
    req.resume();
    const answer = reply(state.inFlight);
    if (answer === "hang") return;
    setTimeout(() => res.writeHead(answer.status).end(), answer.delayMs);
  });
  return { state, ...(await listenLocally(server)) };
}
