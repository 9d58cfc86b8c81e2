import assert from "node:assert/strict";
import { test } from "node:test";
import { NotificationScanner, notificationChannel } from "./notification-scanner.js";

/** A backend message: type byte, length (counting itself), body. */
function message(type: string, body: Buffer): Buffer {
  const header = Buffer.alloc(5);
  header.write(type, 0, "latin1");
  header.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([header, body]);
}

function notification(channel: string, payload: string): Buffer {
  const pid = Buffer.alloc(4);
  pid.writeInt32BE(42);
  return message("A", Buffer.concat([pid, Buffer.from(`${channel}\0${payload}\0`)]));
}

test("notifications are found whole however the output is cut, and nothing else is", () => {
  const output = Buffer.concat([
    message("T", Buffer.from("row description")),
    message("D", Buffer.alloc(300, 0x41)), // a data row full of 'A' bytes is still a data row
    notification("bullmq_jobs", "queue-1"),
    message("C", Buffer.from("SELECT 1\0")),
    notification("other", "x"),
    message("Z", Buffer.from("I")),
  ]);
  for (const size of [1, 2, 3, 5, 7, 64, output.length]) {
    const found: Buffer[] = [];
    const scanner = new NotificationScanner((m) => found.push(m));
    for (let i = 0; i < output.length; i += size) scanner.scan(Buffer.from(output.subarray(i, i + size)));
    assert.deepEqual(
      found.map((m) => [
        notificationChannel(m),
        m.equals(notification(notificationChannel(m), m.includes("queue-1") ? "queue-1" : "x")),
      ]),
      [
        ["bullmq_jobs", true],
        ["other", true],
      ],
      `chunks of ${size} bytes`,
    );
  }
});
