import http from "node:http";
import type { AddressInfo } from "node:net";
import type { ReceiverMessage, ReceiverReport, RequestTimes } from "./receiver-protocol.js";

// The webhook receiver, in its own process so its CPU is not the bench's or Hookline's: answers
// every POST with 200 on a keep-alive connection and counts the requests it has fully read. In
// fail-first mode (retry lateness) it fails each delivery's first requests and keeps their times.
// Started by the bench with fork(); it exits when the bench goes away.

const send = (report: ReceiverReport) => process.send?.(report);
const clock = () => performance.timeOrigin + performance.now();

let count = 0;
let firstAt = 0;
let lastAt = 0;
let target = Number.POSITIVE_INFINITY;
let failures = 0;
const timeline = new Map<string, RequestTimes[]>();

const server = http.createServer({ keepAlive: true }, (req, res) => {
  const arrivedAt = clock();
  req.on("data", () => {});
  req.on("end", () => {
    count += 1;
    lastAt = clock();
    if (count === 1) firstAt = lastAt;
    let status = 200;
    let times: RequestTimes[] | undefined;
    if (failures > 0) {
      const key = `${req.url} ${req.headers["webhook-id"]}`;
      times = timeline.get(key) ?? [];
      timeline.set(key, times);
      if (times.length < failures) status = 500;
    }
    res.writeHead(status, { "content-type": "text/plain", "content-length": "2" });
    res.end("ok");
    times?.push([arrivedAt, clock()]);
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
    timeline.clear();
    send({ type: "counted", count, firstAt, lastAt });
  } else if (message.type === "expect") {
    target = message.count;
    if (count >= target) send({ type: "reached", count, firstAt, lastAt });
  } else if (message.type === "count") {
    send({ type: "counted", count, firstAt, lastAt });
  } else if (message.type === "fail-first") {
    failures = message.failures;
    send({ type: "counted", count, firstAt, lastAt });
  } else if (message.type === "timeline") {
    send({ type: "timeline", deliveries: [...timeline.values()] });
  }
});
process.on("disconnect", () => process.exit(0));

server.listen(0, "127.0.0.1", () => {
  send({ type: "listening", port: (server.address() as AddressInfo).port });
});
