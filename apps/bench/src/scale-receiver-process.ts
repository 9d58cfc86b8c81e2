import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type {
  ScaleReceiverListening,
  ScaleReceiverReply,
  ScaleReceiverRequest,
} from "./scale-receiver-protocol.js";

// The receiver for `pnpm bench:scale`, in its own process. The path says how to answer:
//   /<group>/ok          200 at once
//   /<group>/slow/<ms>   200 after ms
//   /<group>/hang        reads the request and never answers
// Requests are counted per group (the first path segment) when fully read, with their arrival time.

const clock = () => performance.timeOrigin + performance.now();
const reply = (message: ScaleReceiverReply | ScaleReceiverListening) => process.send?.(message);

let times = new Map<string, number[]>();
let probes: Record<string, number> = {};
let waiters: { id: number; group: string; count: number }[] = [];
const held = new Set<Socket>();
const PROBE = /"probe":"([^"]+)"/;

const server = http.createServer({ keepAlive: true }, (req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    const at = clock();
    const [, group = "", mode = "ok", ms = "0"] = (req.url ?? "/").split("/");
    const probe = PROBE.exec(Buffer.concat(chunks).toString())?.[1];
    if (probe) probes[probe] = at;
    const list = times.get(group) ?? [];
    times.set(group, list);
    list.push(at);
    waiters = waiters.filter((w) => {
      if (w.group !== group || list.length < w.count) return true;
      reply({ id: w.id, type: "done" });
      return false;
    });
    if (mode === "hang") {
      held.add(req.socket);
      req.socket.once("close", () => held.delete(req.socket));
      return;
    }
    const answer = () => {
      res.writeHead(200, { "content-type": "text/plain", "content-length": "2" });
      res.end("ok");
    };
    if (mode === "slow") setTimeout(answer, Number(ms));
    else answer();
  });
});
server.keepAliveTimeout = 120_000;
server.headersTimeout = 130_000;
server.requestTimeout = 0;

process.on("message", (request: ScaleReceiverRequest) => {
  if (request.type === "reset") {
    times = new Map();
    probes = {};
    waiters = [];
    for (const socket of held) socket.destroy();
    reply({ id: request.id, type: "done" });
  } else if (request.type === "times") {
    reply({ id: request.id, type: "times", times: times.get(request.group) ?? [] });
  } else if (request.type === "wait") {
    if ((times.get(request.group)?.length ?? 0) >= request.count) reply({ id: request.id, type: "done" });
    else waiters.push({ id: request.id, group: request.group, count: request.count });
  } else if (request.type === "probes") {
    reply({ id: request.id, type: "probes", probes });
  }
});
process.on("disconnect", () => process.exit(0));

server.listen(0, "127.0.0.1", () => {
  reply({ type: "listening", port: (server.address() as AddressInfo).port });
});
