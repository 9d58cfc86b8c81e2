import assert from "node:assert/strict";
import { once } from "node:events";
import type { TestContext } from "node:test";
import { test } from "node:test";
import {
  type AttemptOutcome,
  createAddressPolicy,
  createHttpClient,
  type HttpClientOptions,
  loadSignalOf,
  verdictOf,
} from "./index.js";
import { closedPort, startHttpServer, startTcpServer, type TestServer } from "./test-helpers.js";

const SIGNATURE = "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=";
const HEADERS = {
  "content-type": "application/json",
  "webhook-id": "msg_1",
  "webhook-timestamp": "1700000000",
  "webhook-signature": SIGNATURE,
};
const BODY = JSON.stringify({ type: "invoice.paid" });

// The receivers here are on loopback, which deliveries may reach only when it is allowed.
const LOOPBACK_ALLOWED = createAddressPolicy({ allowedCidrs: [{ address: "127.0.0.0", prefix: 8 }] });

function clientFor(t: TestContext, options: Partial<HttpClientOptions> = {}) {
  const client = createHttpClient({
    timeoutMs: 2000,
    maxResponseBytes: 1024,
    addressPolicy: LOOPBACK_ALLOWED,
    ...options,
  });
  t.after(() => client.close());
  return client;
}

function closeAfter(t: TestContext, server: TestServer): TestServer {
  t.after(() => server.close());
  return server;
}

function expectError(outcome: AttemptOutcome): string {
  assert.equal(outcome.kind, "error", `expected an error outcome, got ${JSON.stringify(outcome)}`);
  assert.ok(!outcome.error.includes(SIGNATURE), "error text must not contain the signature");
  return outcome.error;
}

function expectResponse(outcome: AttemptOutcome): Extract<AttemptOutcome, { kind: "response" }> {
  assert.equal(outcome.kind, "response", `expected a response outcome, got ${JSON.stringify(outcome)}`);
  return outcome;
}

test("the receiver gets a POST with the signed headers and the exact body", async (t) => {
  let received: { method?: string; headers: Record<string, unknown>; body: string } | undefined;
  const server = closeAfter(
    t,
    await startHttpServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        received = { method: req.method, headers: req.headers, body: Buffer.concat(chunks).toString() };
        res.end("thanks");
      });
    }),
  );

  const outcome = await clientFor(t).post({ url: server.url, headers: HEADERS, body: Buffer.from(BODY) });

  assert.equal(expectResponse(outcome).body, "thanks");
  assert.equal(received?.method, "POST");
  assert.equal(received?.body, BODY);
  assert.equal(received?.headers["webhook-signature"], SIGNATURE);
  assert.equal(received?.headers["webhook-id"], "msg_1");
  assert.equal(received?.headers["content-type"], "application/json");
});

test("2xx is delivered, 410 is gone, 500 and 404 are retried", async (t) => {
  const server = closeAfter(
    t,
    await startHttpServer((req, res) => {
      res.statusCode = Number(req.url?.split("/").pop());
      res.end(`status ${res.statusCode}`);
    }),
  );
  const client = clientFor(t);
  const verdicts: Record<number, string> = {};
  for (const status of [200, 204, 299, 410, 500, 404]) {
    const outcome = await client.post({ url: `${server.url}/${status}`, headers: HEADERS, body: BODY });
    assert.equal(expectResponse(outcome).status, status);
    verdicts[status] = verdictOf(outcome);
  }
  assert.deepEqual(verdicts, {
    200: "delivered",
    204: "delivered",
    299: "delivered",
    410: "gone",
    500: "retry",
    404: "retry",
  });
});

test("a receiver that never answers times out with the deadline in the message", async (t) => {
  const server = closeAfter(t, await startHttpServer(() => {}));

  const outcome = await clientFor(t, { timeoutMs: 300 }).post({
    url: server.url,
    headers: HEADERS,
    body: BODY,
  });

  assert.equal(expectError(outcome), "no response within 300 ms");
  assert.ok(outcome.durationMs >= 300 && outcome.durationMs < 1500, `durationMs ${outcome.durationMs}`);
  assert.equal(verdictOf(outcome), "retry");
  assert.equal(loadSignalOf(outcome), "overload", "a timeout held its slot for the whole deadline");
});

test("a redirect is returned as it is, not followed, and retried", async (t) => {
  let targetRequests = 0;
  const target = closeAfter(
    t,
    await startHttpServer((_req, res) => {
      targetRequests++;
      res.end("ok");
    }),
  );
  const redirecting = closeAfter(
    t,
    await startHttpServer((_req, res) => {
      res.writeHead(302, { location: target.url }).end();
    }),
  );

  const outcome = await clientFor(t).post({ url: redirecting.url, headers: HEADERS, body: BODY });

  assert.equal(expectResponse(outcome).status, 302);
  assert.equal(verdictOf(outcome), "retry");
  assert.equal(targetRequests, 0);
  assert.equal(target.connections(), 0);
});

test("a 200 that streams forever returns quickly with exactly maxResponseBytes of body", async (t) => {
  let responseClosed: Promise<unknown> | undefined;
  const server = closeAfter(
    t,
    await startHttpServer((_req, res) => {
      responseClosed = once(res, "close");
      res.writeHead(200, { "content-type": "text/plain" });
      const chunk = Buffer.alloc(16 * 1024, "a");
      const pump = (): void => {
        while (!res.destroyed && res.write(chunk)) {}
      };
      res.on("drain", pump);
      pump();
    }),
  );

  const outcome = await clientFor(t, { timeoutMs: 5000, maxResponseBytes: 1000 }).post({
    url: server.url,
    headers: HEADERS,
    body: BODY,
  });

  const response = expectResponse(outcome);
  assert.equal(response.status, 200);
  assert.equal(response.body, "a".repeat(1000));
  assert.ok(response.durationMs < 5000, `durationMs ${response.durationMs}`);
  // The client stopped reading and hung up instead of draining the stream.
  await responseClosed;
});

test("a body cut inside a multi-byte character is returned without the broken character", async (t) => {
  const server = closeAfter(
    t,
    await startHttpServer((_req, res) => {
      res.end("€".repeat(10));
    }),
  );

  const outcome = await clientFor(t, { maxResponseBytes: 10 }).post({
    url: server.url,
    headers: HEADERS,
    body: BODY,
  });

  assert.equal(expectResponse(outcome).body, "€€€");
});

test("a closed port is reported as a refused connection", async (t) => {
  const port = await closedPort();

  const outcome = await clientFor(t).post({ url: `http://127.0.0.1:${port}/`, headers: HEADERS, body: BODY });

  assert.equal(expectError(outcome), "connection failed: ECONNREFUSED");
  assert.equal(verdictOf(outcome), "retry");
  assert.equal(
    loadSignalOf(outcome),
    "failure",
    "load, or an endpoint that is down: the limiter tells which",
  );
});

test("a reset before the response is reported as a reset connection", async (t) => {
  const server = closeAfter(
    t,
    await startTcpServer((socket) => {
      socket.once("data", () => socket.resetAndDestroy());
    }),
  );

  const outcome = await clientFor(t).post({ url: server.url, headers: HEADERS, body: BODY });

  assert.equal(expectError(outcome), "connection reset: ECONNRESET");
});

test("a socket reset in the middle of the body keeps the status the receiver sent", async (t) => {
  const server = closeAfter(
    t,
    await startTcpServer((socket) => {
      socket.once("data", () => {
        socket.write("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nhello", () => socket.resetAndDestroy());
      });
    }),
  );

  const outcome = await clientFor(t).post({ url: server.url, headers: HEADERS, body: BODY });

  const response = expectResponse(outcome);
  assert.equal(response.status, 200);
  assert.ok("hello".startsWith(response.body), `body ${JSON.stringify(response.body)}`);
});

test("a body slower than the deadline returns the response with what arrived in time", async (t) => {
  const server = closeAfter(
    t,
    await startHttpServer((_req, res) => {
      res.writeHead(200, { "content-length": "100" });
      res.write("first part");
    }),
  );

  const outcome = await clientFor(t, { timeoutMs: 300 }).post({
    url: server.url,
    headers: HEADERS,
    body: BODY,
  });

  const response = expectResponse(outcome);
  assert.equal(response.status, 200);
  assert.equal(response.body, "first part");
  assert.equal(verdictOf(outcome), "delivered");
  assert.ok(response.durationMs >= 290 && response.durationMs < 1500, `durationMs ${response.durationMs}`);
});

test("an answer that is not HTTP is reported as an invalid response", async (t) => {
  const server = closeAfter(
    t,
    await startTcpServer((socket) => {
      socket.once("data", () => socket.end("SMTP ready\r\n\r\n"));
    }),
  );

  const outcome = await clientFor(t).post({ url: server.url, headers: HEADERS, body: BODY });

  assert.match(expectError(outcome), /^invalid HTTP response: \S/);
});

test("bad URLs and bad header values are reported without sending anything", async (t) => {
  const client = clientFor(t);

  assert.equal(
    expectError(await client.post({ url: "not a url", headers: HEADERS, body: BODY })),
    "invalid URL",
  );
  assert.match(
    expectError(await client.post({ url: "ftp://127.0.0.1/", headers: HEADERS, body: BODY })),
    /^invalid URL/,
  );
  const badHeader = `${SIGNATURE}\r\nx-injected: 1`;
  const error = expectError(
    await client.post({
      url: `http://127.0.0.1:${await closedPort()}/`,
      headers: { ...HEADERS, "webhook-signature": badHeader },
      body: BODY,
    }),
  );
  assert.equal(error, "invalid request: invalid webhook-signature header");
});

test("sequential posts to one receiver reuse keep-alive connections", async (t) => {
  const server = closeAfter(
    t,
    await startHttpServer((_req, res) => {
      res.end("ok");
    }),
  );
  const client = clientFor(t);

  for (let i = 0; i < 100; i++) {
    assert.equal(
      verdictOf(await client.post({ url: server.url, headers: HEADERS, body: BODY })),
      "delivered",
    );
  }

  assert.ok(server.connections() <= 2, `${server.connections()} connections for 100 posts`);
});

test("an endpoint's hung requests do not hold up another endpoint on the same host", async (t) => {
  // Two endpoints behind one host and port: one hangs with more requests in flight than any fixed
  // per-host pool would hold (an adaptive limit may reach 50 per endpoint).
  const server = closeAfter(
    t,
    await startHttpServer((req, res) => {
      if (req.url?.endsWith("/fast")) res.end("ok");
    }),
  );
  const client = clientFor(t, { timeoutMs: 3000 });
  let hungSettled = 0;
  const hung = Array.from({ length: 100 }, () =>
    client.post({ url: `${server.url}/hung`, headers: HEADERS, body: BODY }).finally(() => {
      hungSettled += 1;
    }),
  );

  const outcome = expectResponse(
    await client.post({ url: `${server.url}/fast`, headers: HEADERS, body: BODY }),
  );

  assert.equal(outcome.status, 200);
  // Behind a per-host pool the answer would come only once hung requests had timed out and
  // freed their connections.
  assert.equal(hungSettled, 0, "the fast endpoint's answer waited for hung requests to give up");
  for (const attempt of await Promise.all(hung)) assert.equal(verdictOf(attempt), "retry");
});

test("Retry-After is read on 429 and 503, as seconds or an HTTP date, and ignored otherwise", async (t) => {
  const server = closeAfter(
    t,
    await startHttpServer((req, res) => {
      const [, status, kind] = req.url?.split("/").slice(1) ?? [];
      const value =
        kind === "date" ? new Date(Date.now() + 120_000).toUTCString() : kind === "bad" ? "soon" : "30";
      res.writeHead(Number(status), { "retry-after": value }).end();
    }),
  );
  const client = clientFor(t);
  const retryAfter = async (path: string): Promise<number | undefined> =>
    expectResponse(await client.post({ url: `${server.url}/${path}`, headers: HEADERS, body: BODY }))
      .retryAfterMs;

  assert.equal(await retryAfter("429/seconds"), 30_000);
  assert.equal(await retryAfter("503/seconds"), 30_000);
  const fromDate = await retryAfter("429/date");
  assert.ok(fromDate !== undefined && fromDate > 115_000 && fromDate <= 120_000, `retryAfterMs ${fromDate}`);
  assert.equal(await retryAfter("429/bad"), undefined);
  assert.equal(await retryAfter("500/seconds"), undefined);
  assert.equal(await retryAfter("200/seconds"), undefined);
});

test("durationMs is measured with the injected clock", async (t) => {
  const server = closeAfter(
    t,
    await startHttpServer((_req, res) => {
      res.end();
    }),
  );
  let ticks = 0;
  const client = clientFor(t, { now: () => 1000 * ticks++ });

  const outcome = await client.post({ url: server.url, headers: HEADERS, body: BODY });

  assert.equal(outcome.durationMs, 1000);
});
