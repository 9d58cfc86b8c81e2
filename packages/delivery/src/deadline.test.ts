import assert from "node:assert/strict";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { createAddressPolicy, createHttpClient, type HttpClient, verdictOf } from "./index.js";
import { startHttpServer, startTcpServer } from "./test-helpers.js";

// One deadline covers connect, TLS, response headers and body: an attempt ends at it, neither
// sooner nor later, whatever phase it is in.

const LOOPBACK_ALLOWED = createAddressPolicy({ allowedCidrs: [{ address: "127.0.0.0", prefix: 8 }] });
const HEADERS = { "content-type": "application/json", "webhook-id": "msg_1" };

function client(timeoutMs: number): HttpClient {
  return createHttpClient({ timeoutMs, maxResponseBytes: 64, addressPolicy: LOOPBACK_ALLOWED });
}

test("an https endpoint that never finishes the TLS handshake times out at the deadline", async (t) => {
  // Accepts the connection and never says a word: the TLS handshake never completes.
  const silent = await startTcpServer(() => {});
  const http = client(600);
  t.after(async () => {
    await http.close();
    await silent.close();
  });

  const started = performance.now();
  const outcome = await http.post({ url: `https://127.0.0.1:${silent.port}/`, headers: HEADERS, body: "{}" });
  const took = performance.now() - started;

  assert.equal(outcome.kind === "error" && outcome.error, "no response within 600 ms");
  // Before, the attempt ended on undici's connect timer, about 1,000 ms in.
  assert.ok(took < 850, `the attempt ended ${Math.round(took)} ms in`);
});

test("an answer that comes within the deadline is never counted as a timeout", async (t) => {
  // Answers 600 ms into an 800 ms deadline. Attempts started at different moments, so that some
  // fall where undici's coarse timers fired early (3 in 12 timed out at 509–590 ms).
  const receiver = await startHttpServer((req, res) => {
    req.resume();
    setTimeout(() => res.end("ok"), 600);
  });
  const http = client(800);
  t.after(async () => {
    await http.close();
    await receiver.close();
  });

  const outcomes = await Promise.all(
    Array.from({ length: 12 }, async (_, i) => {
      await sleep(i * 41);
      return http.post({ url: receiver.url, headers: HEADERS, body: "{}" });
    }),
  );

  assert.deepEqual(
    outcomes.map((outcome) => verdictOf(outcome)),
    outcomes.map(() => "delivered"),
    JSON.stringify(outcomes.filter((outcome) => outcome.kind === "error")),
  );
});
