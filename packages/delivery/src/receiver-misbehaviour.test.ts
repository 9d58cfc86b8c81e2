import assert from "node:assert/strict";
import type http from "node:http";
import type net from "node:net";
import type { TestContext } from "node:test";
import { test } from "node:test";
import {
  type AttemptOutcome,
  createAddressPolicy,
  createHttpClient,
  type HttpClient,
  retryDelayMs,
  type Verdict,
  verdictOf,
} from "./index.js";
import { startHttpServer, startTcpServer, type TestServer } from "./test-helpers.js";

const TIMEOUT_MS = 500;
// Generous for a loaded CI machine, but far below anything that would stall a worker.
const RETURNS_WITHIN_MS = TIMEOUT_MS + 1000;
const HEADERS = { "content-type": "application/json", "webhook-id": "msg_1" };
const BODY = JSON.stringify({ type: "invoice.paid" });
const RETRY = { scheduleMs: [5_000, 300_000], jitter: 0.2 };

interface Case {
  name: string;
  start(t: TestContext): Promise<TestServer>;
  verdict: Verdict;
  check(outcome: AttemptOutcome): void;
}

/** Writes `chunk` every 50 ms until the client goes away. */
function trickle(socket: net.Socket | http.ServerResponse, chunk: string): void {
  const timer = setInterval(() => socket.write(chunk), 50);
  socket.on("close", () => clearInterval(timer));
}

function errorOf(outcome: AttemptOutcome): string {
  assert.equal(outcome.kind, "error", `expected an error, got ${JSON.stringify(outcome)}`);
  return outcome.kind === "error" ? outcome.error : "";
}

function responseOf(outcome: AttemptOutcome): Extract<AttemptOutcome, { kind: "response" }> {
  assert.equal(outcome.kind, "response", `expected a response, got ${JSON.stringify(outcome)}`);
  return outcome as Extract<AttemptOutcome, { kind: "response" }>;
}

const CASES: Case[] = [
  {
    name: "hanging: accepts the connection and never answers",
    start: () => startHttpServer(() => {}),
    verdict: "retry",
    check: (outcome) => assert.equal(errorOf(outcome), `no response within ${TIMEOUT_MS} ms`),
  },
  {
    name: "slow headers: a header line every 50 ms, never the end of them",
    start: () =>
      startTcpServer((socket) => {
        socket.once("data", () => {
          socket.write("HTTP/1.1 200 OK\r\n");
          trickle(socket, "x-slow: a\r\n");
        });
      }),
    verdict: "retry",
    check: (outcome) => assert.equal(errorOf(outcome), `no response within ${TIMEOUT_MS} ms`),
  },
  {
    name: "slow endless body: 200, then a byte every 50 ms forever",
    start: () =>
      startHttpServer((_req, res) => {
        res.writeHead(200, { "content-type": "text/plain" });
        trickle(res, ".");
      }),
    verdict: "delivered",
    check: (outcome) => {
      const response = responseOf(outcome);
      assert.equal(response.status, 200);
      assert.match(response.body, /^\.+$/);
    },
  },
  {
    name: "reset in the middle of the body",
    start: () =>
      startTcpServer((socket) => {
        socket.once("data", () => {
          socket.write("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nhello", () => socket.resetAndDestroy());
        });
      }),
    verdict: "delivered",
    check: (outcome) => {
      const response = responseOf(outcome);
      assert.equal(response.status, 200);
      assert.ok("hello".startsWith(response.body), `body ${JSON.stringify(response.body)}`);
    },
  },
  {
    name: "huge headers: one 20 KiB header value",
    start: () =>
      startTcpServer((socket) => {
        socket.once("data", () => socket.end(`HTTP/1.1 200 OK\r\nx-big: ${"a".repeat(20 * 1024)}\r\n\r\n`));
      }),
    verdict: "retry",
    check: (outcome) =>
      assert.equal(errorOf(outcome), "invalid HTTP response: headers larger than 16384 bytes"),
  },
  {
    name: "huge headers: 2000 small header lines",
    start: () =>
      startTcpServer((socket) => {
        socket.once("data", () => socket.end(`HTTP/1.1 200 OK\r\n${"x-many: aaaa\r\n".repeat(2000)}\r\n`));
      }),
    verdict: "retry",
    check: (outcome) =>
      assert.equal(errorOf(outcome), "invalid HTTP response: headers larger than 16384 bytes"),
  },
  {
    name: "invalid HTTP: another protocol answers",
    start: () =>
      startTcpServer((socket) => {
        socket.once("data", () => socket.end("220 smtp.test ESMTP ready\r\n\r\n"));
      }),
    verdict: "retry",
    check: (outcome) => assert.match(errorOf(outcome), /^invalid HTTP response: \S/),
  },
  {
    name: "invalid HTTP: a status line without a number",
    start: () =>
      startTcpServer((socket) => {
        socket.once("data", () => socket.end("HTTP/1.1 OK\r\n\r\n"));
      }),
    verdict: "retry",
    check: (outcome) => assert.match(errorOf(outcome), /^invalid HTTP response: \S/),
  },
  redirectToInternal(),
  {
    name: "429 with an absurd Retry-After",
    start: () =>
      startHttpServer((_req, res) => {
        res.writeHead(429, { "retry-after": "9".repeat(30) }).end("slow down");
      }),
    verdict: "retry",
    check: (outcome) => {
      const response = responseOf(outcome);
      assert.equal(response.status, 429);
      assert.equal(response.retryAfterMs, Number.MAX_SAFE_INTEGER);
      // Clamped to twice the scheduled wait: a receiver cannot park a delivery (random() = 0: no
      // spread; the jitter adds at most a fifth).
      assert.equal(
        retryDelayMs(RETRY, 1, outcome, () => 0),
        10_000,
      );
    },
  },
  {
    name: "429 with a Retry-After date in the year 9999",
    start: () =>
      startHttpServer((_req, res) => {
        res.writeHead(429, { "retry-after": "Fri, 31 Dec 9999 23:59:59 GMT" }).end();
      }),
    verdict: "retry",
    check: (outcome) =>
      assert.equal(
        retryDelayMs(RETRY, 2, outcome, () => 0),
        600_000,
      ),
  },
];

/** A 302 to an internal service on loopback, which must never be reached. */
function redirectToInternal(): Case {
  let internal: TestServer | undefined;
  return {
    name: "redirect to an internal address",
    start: async (t) => {
      const target = await startHttpServer((_req, res) => res.end("internal"));
      t.after(() => target.close());
      internal = target;
      return startHttpServer((_req, res) => {
        res.writeHead(302, { location: target.url }).end();
      });
    },
    verdict: "retry",
    check: (outcome) => {
      assert.equal(responseOf(outcome).status, 302);
      assert.equal(internal?.connections(), 0, "the redirect was not followed");
    },
  };
}

function clientFor(t: TestContext): HttpClient {
  const client = createHttpClient({
    timeoutMs: TIMEOUT_MS,
    maxResponseBytes: 64,
    addressPolicy: createAddressPolicy({ allowedCidrs: [{ address: "127.0.0.0", prefix: 8 }] }),
  });
  t.after(() => client.close());
  return client;
}

async function timedPost(client: HttpClient, url: string): Promise<{ outcome: AttemptOutcome; ms: number }> {
  const started = performance.now();
  const outcome = await client.post({ url, headers: HEADERS, body: BODY });
  return { outcome, ms: performance.now() - started };
}

test("each misbehaving receiver gives the right outcome within the deadline, and the client stays healthy", async (t) => {
  const healthy = await startHttpServer((_req, res) => res.end("ok"));
  t.after(() => healthy.close());
  const client = clientFor(t);

  for (const misbehaviour of CASES) {
    await t.test(misbehaviour.name, async (t) => {
      const server = await misbehaviour.start(t);
      t.after(() => server.close());

      const { outcome, ms } = await timedPost(client, server.url);

      misbehaviour.check(outcome);
      assert.equal(verdictOf(outcome), misbehaviour.verdict);
      assert.ok(ms < RETURNS_WITHIN_MS, `returned after ${Math.round(ms)} ms`);
      assert.ok(outcome.durationMs <= ms + 1, `durationMs ${outcome.durationMs} of ${Math.round(ms)} ms`);

      const after = await timedPost(client, healthy.url);
      assert.equal(verdictOf(after.outcome), "delivered", "a healthy receiver still gets its delivery");
      assert.ok(after.ms < RETURNS_WITHIN_MS, `healthy post took ${Math.round(after.ms)} ms`);
    });
  }
});

test("all misbehaving receivers at once do not hold up a healthy one on the same client", async (t) => {
  const healthy = await startHttpServer((_req, res) => res.end("ok"));
  t.after(() => healthy.close());
  const client = clientFor(t);
  const servers = await Promise.all(CASES.map((misbehaviour) => misbehaviour.start(t)));
  t.after(() => Promise.all(servers.map((server) => server.close())));

  const started = performance.now();
  const bad = Promise.all(servers.map((server) => timedPost(client, server.url)));
  const good = await Promise.all([1, 2, 3].map(() => timedPost(client, healthy.url)));
  const results = await bad;

  for (const { outcome, ms } of good) {
    assert.equal(verdictOf(outcome), "delivered");
    assert.ok(ms < TIMEOUT_MS, `a healthy post took ${Math.round(ms)} ms among misbehaving ones`);
  }
  results.forEach(({ outcome }, i) => {
    assert.equal(verdictOf(outcome), CASES[i]?.verdict, CASES[i]?.name);
  });
  const total = performance.now() - started;
  assert.ok(total < RETURNS_WITHIN_MS, `everything settled after ${Math.round(total)} ms`);
});
