import http from "node:http";
import type { AddressInfo } from "node:net";
import type { ReceiverMessage, ReceiverReport } from "./receiver-protocol.js";

// The webhook receiver, in its own process so its CPU is not the bench's or Hookline's: answers
// every POST with 200 on a keep-alive connection and counts the requests it has fully read.
// Started by the bench with fork(); it exits when the bench goes away.

const send = (report: ReceiverReport) => process.send?.(report);
const clock = () => performance.timeOrigin + performance.now();

let count = 0;
let firstAt = 0;
let lastAt = 0;
let target = Number.POSITIVE_INFINITY;

const server = http.createServer({ keepAlive: true }, (req, res) => {
  req.on("data", () => {});
  req.on("end", () => {
    count += 1;
    lastAt = clock();
    if (count === 1) firstAt = lastAt;
    res.writeHead(200, { "content-type": "text/plain", "content-length": "2" });
    res.end("ok");
    if (count === target) send({ type: "reached", count, firstAt, lastAt });
  });
});
server.keepAliveTimeout = 120_000;
server.headersTimeout = 130_000;

process.on("message", (message: ReceiverMessage) => {
  if (message.type === "reset") {
    count = 0;
    firstAt = 0;
    lastAt = 0;
    target = Number.POSITIVE_INFINITY;
    send({ type: "counted", count, firstAt, lastAt });
  } else if (message.type === "expect") {
    target = message.count;
    if (count >= target) send({ type: "reached", count, firstAt, lastAt });
  } else if (message.type === "count") {
    send({ type: "counted", count, firstAt, lastAt });
  }
});
process.on("disconnect", () => process.exit(0));

server.listen(0, "127.0.0.1", () => {
  send({ type: "listening", port: (server.address() as AddressInfo).port });
});
