import { EventEmitter, once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";

/** One request a receiver saw. */
export interface ReceivedRequest {
  headers: http.IncomingHttpHeaders;
  body: string;
  receivedAt: number;
}

/** How the receiver answers its nth request (1-based): a status, or "hang" to never answer. */
export type ReceiverReply = { status: number; body?: string; headers?: Record<string, string> } | "hang";

export interface Receiver {
  readonly url: string;
  readonly requests: ReceivedRequest[];
  /** Resolves once count requests have arrived in total. */
  waitForRequests(count: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  /** True when every request verifies with the reference library under one of these secrets. */
  verifyAll(secrets: string[]): boolean;
  close(): Promise<void>;
}

/** A local webhook receiver on 127.0.0.1 that records what it is sent. */
export async function startReceiver(
  reply: (request: ReceivedRequest, n: number) => ReceiverReply = () => ({ status: 200 }),
): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  const arrivals = new EventEmitter();
  const hanging = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const request = {
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
        receivedAt: Date.now(),
      };
      requests.push(request);
      const answer = reply(request, requests.length);
      arrivals.emit("request");
      if (answer === "hang") {
        hanging.add(res);
        return;
      }
      res.writeHead(answer.status, answer.headers ?? {});
      res.end(answer.body ?? "");
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    requests,
    async waitForRequests(count, timeoutMs = 20_000) {
      const deadline = setTimeout(() => arrivals.emit("timeout"), timeoutMs);
      try {
        while (requests.length < count) {
          const [what] = await Promise.race([
            once(arrivals, "request").then(() => ["request"]),
            once(arrivals, "timeout").then(() => ["timeout"]),
          ]);
          if (what === "timeout")
            throw new Error(`receiver saw ${requests.length} of ${count} requests in ${timeoutMs} ms`);
        }
        return requests.slice(0, count);
      } finally {
        clearTimeout(deadline);
      }
    },
    verifyAll(secrets) {
      return requests.every((request) =>
        secrets.some((secret) => {
          try {
            new Webhook(secret).verify(request.body, request.headers as Record<string, string>);
            return true;
          } catch {
            return false;
          }
        }),
      );
    },
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
