import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";

/** One request the receiver saw, and what became of it. */
export interface Receipt {
  /** `<webhook-id>|<endpoint id>`: one delivery. */
  key: string;
  arrivedAt: number;
  /** When the answer was sent, the connection cut, or the sender gave up. */
  doneAt: number;
  /** The status answered (or about to be); 0 when the request was cut. */
  status: number;
  /**
   * answered: sent in full; cut: the connection closed after the status line was sent (the
   * receiver cut it, or the sender gave up mid-body), so the sender may have read the status;
   * aborted: the sender went away before any answer.
   */
  outcome: "answered" | "cut" | "aborted";
  /** The receiver misbehaved on purpose (cut, or slower than the delivery deadline). */
  faulted: boolean;
  /**
   * The webhook-timestamp the sender stamped: the second its attempt started. It ties a request
   * to its attempt row exactly, where arrival times can be seconds late on a starved machine.
   */
  stampedSecond?: number;
}

/** How to treat one request: answer (maybe late), or close the connection mid-body. */
export type Action =
  | { kind: "answer"; status: number; delayMs: number; faulted?: boolean }
  | { kind: "cut-request" }
  | { kind: "cut-response" };

/** Decides the action for the nth request (1-based) of one delivery. */
export type Behaviour = (eventId: string, endpointId: string, nth: number) => Action;

export interface FaultReceiver {
  url(endpointId: string): string;
  readonly receipts: Receipt[];
  /** Requests being handled now, in total and the most ever at once per endpoint. */
  inFlight(): number;
  readonly maxInFlight: Map<string, number>;
  /** Forgets the per-endpoint maxima (to measure a later phase alone). */
  resetMaxInFlight(): void;
  close(): Promise<void>;
}

const fast: Behaviour = () => ({ kind: "answer", status: 200, delayMs: 0 });

/** A loopback webhook receiver that records every request by delivery and can misbehave on cue. */
export async function startFaultReceiver(behaviour: Behaviour = fast): Promise<FaultReceiver> {
  const receipts: Receipt[] = [];
  const seen = new Map<string, number>();
  const current = new Map<string, number>();
  const maxInFlight = new Map<string, number>();
  let total = 0;
  const server = http.createServer((req, res) => {
    const endpointId = decodeURIComponent((req.url ?? "/").slice(1));
    const eventId = String(req.headers["webhook-id"] ?? "");
    const key = `${eventId}|${endpointId}`;
    const nth = (seen.get(key) ?? 0) + 1;
    seen.set(key, nth);
    const receipt: Receipt = {
      key,
      arrivedAt: Date.now(),
      doneAt: 0,
      status: 0,
      outcome: "aborted",
      faulted: false,
    };
    const stamped = Number(req.headers["webhook-timestamp"]);
    if (Number.isInteger(stamped)) receipt.stampedSecond = stamped;
    receipts.push(receipt);
    total += 1;
    const now = (current.get(endpointId) ?? 0) + 1;
    current.set(endpointId, now);
    maxInFlight.set(endpointId, Math.max(now, maxInFlight.get(endpointId) ?? 0));
    const finish = (outcome: Receipt["outcome"]) => {
      if (receipt.doneAt !== 0) return;
      receipt.doneAt = Date.now();
      receipt.outcome = outcome;
      total -= 1;
      current.set(endpointId, (current.get(endpointId) ?? 1) - 1);
    };
    res.on("finish", () => finish("answered"));
    // A close can come before 'finish' when the sender reads the whole answer and drops the
    // connection while this loaded process has yet to run end()'s write callback: an answer whose
    // end() ran was sent in full as far as the receiver can tell (the sender's own record says
    // whether it arrived, and the check accepts any receipt for an attempt that saw no status).
    // A close after the status line but before the end is a cut whoever made it: on a loaded
    // machine the sender's deadline can fall between a cut-response's head and its cut, and the
    // sender then records the 200 it read, which the check must be able to match.
    res.on("close", () => finish(res.writableEnded ? "answered" : res.headersSent ? "cut" : "aborted"));
    const action = behaviour(eventId, endpointId, nth);
    if (action.kind === "cut-request") {
      // Closed before the body is read: the sender sees its request fail mid-body.
      receipt.faulted = true;
      finish("cut");
      req.socket.destroy();
      return;
    }
    req.resume();
    req.on("end", () => {
      if (action.kind === "cut-response") {
        // A 200 and the start of a body, then the connection drops.
        receipt.faulted = true;
        receipt.status = 200;
        res.writeHead(200, { "content-type": "text/plain", "content-length": "64" });
        res.write("partial");
        setTimeout(() => {
          finish("cut");
          res.socket?.destroy();
        }, 5);
        return;
      }
      receipt.status = action.status;
      receipt.faulted = action.faulted ?? false;
      const answer = () => {
        if (res.destroyed) return;
        res.writeHead(action.status, { "content-type": "text/plain" });
        res.end("ok");
      };
      if (action.delayMs > 0) setTimeout(answer, action.delayMs);
      else answer();
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: (endpointId) => `http://127.0.0.1:${port}/${encodeURIComponent(endpointId)}`,
    receipts,
    inFlight: () => total,
    maxInFlight,
    resetMaxInFlight: () => maxInFlight.clear(),
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
