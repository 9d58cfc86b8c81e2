import assert from "node:assert/strict";
import type { LookupAddress } from "node:dns";
import http from "node:http";
import net from "node:net";
import type { TestContext } from "node:test";
import { test } from "node:test";
import {
  type AttemptOutcome,
  createAddressPolicy,
  createHttpClient,
  type HttpClientOptions,
  type LookupAll,
  retryDelayMs,
  verdictOf,
} from "./index.js";
import { type ListenOn, startHttpServer, startTcpServer, type TestServer } from "./test-helpers.js";

const HEADERS = { "content-type": "application/json", "webhook-id": "msg_1" };
const BODY = JSON.stringify({ type: "invoice.paid" });
const LOOPBACK_ALLOWED = createAddressPolicy({ allowedCidrs: [{ address: "127.0.0.0", prefix: 8 }] });

function clientFor(t: TestContext, options: Partial<HttpClientOptions> = {}) {
  const client = createHttpClient({ timeoutMs: 2000, maxResponseBytes: 1024, ...options });
  t.after(() => client.close());
  return client;
}

async function serve(t: TestContext, handler: http.RequestListener = okHandler, on: ListenOn = {}) {
  const server = await startHttpServer(handler, on);
  t.after(() => server.close());
  return server;
}

function okHandler(_req: http.IncomingMessage, res: http.ServerResponse): void {
  res.end("ok");
}

/** A resolver that answers from a table (or a function of the call number) and counts its calls. */
function fakeDns(answer: (hostname: string, call: number) => string[]): LookupAll & { calls: string[] } {
  const calls: string[] = [];
  const lookup = async (hostname: string): Promise<LookupAddress[]> => {
    calls.push(hostname);
    return answer(hostname, calls.length).map((address) => ({
      address,
      family: net.isIPv6(address) ? 6 : 4,
    }));
  };
  return Object.assign(lookup, { calls });
}

function expectBlocked(outcome: AttemptOutcome, error: string): void {
  assert.deepEqual(
    { kind: outcome.kind, error: outcome.kind === "error" ? outcome.error : undefined },
    { kind: "error", error },
  );
  assert.equal(verdictOf(outcome), "blocked");
}

test("literal blocked addresses in every spelling are refused without connecting", async (t) => {
  const receiver = await serve(t);
  const client = clientFor(t, { lookup: fakeDns(() => assert.fail("a literal address needs no lookup")) });
  const port = receiver.port;
  const loopback = "blocked: 127.0.0.1 is a loopback address";
  const expected: Record<string, string> = {
    [`http://127.0.0.1:${port}/`]: loopback,
    [`http://2130706433:${port}/`]: loopback,
    [`http://0177.0.0.1:${port}/`]: loopback,
    [`http://0x7f.1:${port}/`]: loopback,
    [`http://127.1:${port}/`]: loopback,
    [`http://[::ffff:127.0.0.1]:${port}/`]:
      "blocked: ::ffff:7f00:1 is a loopback address (IPv4-mapped form of 127.0.0.1)",
    [`http://[::1]:${port}/`]: "blocked: ::1 is a loopback address",
    [`http://0:${port}/`]: "blocked: 0.0.0.0 is an unspecified address",
    "http://169.254.169.254/latest/meta-data/":
      "blocked: 169.254.169.254 is a link-local address (cloud metadata)",
    "http://10.0.0.5/": "blocked: 10.0.0.5 is a private address",
  };
  for (const [url, error] of Object.entries(expected)) {
    expectBlocked(await client.post({ url, headers: HEADERS, body: BODY }), error);
  }
  assert.equal(receiver.connections(), 0);
});

test("a hostname is refused when any address it resolves to is blocked", async (t) => {
  const answers: Record<string, string[]> = {
    "private.test": ["10.0.0.5"],
    "metadata.test": ["169.254.169.254"],
    "mapped.test": ["::ffff:127.0.0.1"],
    "mixed.test": ["93.184.215.14", "10.0.0.5"],
    "mixed-v6.test": ["2606:4700:4700::1111", "fd00::1"],
  };
  const dns = fakeDns((hostname) => answers[hostname] ?? []);
  const client = clientFor(t, { lookup: dns });
  const post = (hostname: string) =>
    client.post({ url: `http://${hostname}/hooks`, headers: HEADERS, body: BODY });

  expectBlocked(await post("private.test"), "blocked: resolves to 10.0.0.5, a private address");
  expectBlocked(
    await post("metadata.test"),
    "blocked: resolves to 169.254.169.254, a link-local address (cloud metadata)",
  );
  expectBlocked(
    await post("mapped.test"),
    "blocked: resolves to ::ffff:127.0.0.1, a loopback address (IPv4-mapped form of 127.0.0.1)",
  );
  expectBlocked(await post("mixed.test"), "blocked: resolves to 10.0.0.5, a private address");
  expectBlocked(await post("mixed-v6.test"), "blocked: resolves to fd00::1, a unique local address");
  assert.deepEqual(dns.calls, Object.keys(answers));
});

test("a name that resolves to nothing is a DNS failure, retried like any other", async (t) => {
  const client = clientFor(t, { lookup: fakeDns(() => []) });

  const outcome = await client.post({ url: "http://nowhere.test/", headers: HEADERS, body: BODY });

  assert.equal(outcome.kind === "error" && outcome.error, "DNS lookup failed: ENOTFOUND");
  assert.equal(verdictOf(outcome), "retry");
});

test("a blocked attempt fails the delivery at once: no retry is scheduled", async (t) => {
  const client = clientFor(t, { lookup: fakeDns(() => ["10.0.0.5"]) });

  const outcome = await client.post({ url: "http://private.test/", headers: HEADERS, body: BODY });

  assert.equal(verdictOf(outcome), "blocked");
  assert.equal(
    retryDelayMs({ scheduleMs: [5_000, 300_000], jitter: 0.2 }, 1, outcome, Math.random),
    undefined,
  );
});

test("allowed ranges re-allow a hostname, which is still sent as Host", async (t) => {
  let host: string | undefined;
  const receiver = await serve(t, (req, res) => {
    host = req.headers.host;
    res.end("ok");
  });
  const dns = fakeDns(() => ["127.0.0.1"]);
  const client = clientFor(t, { addressPolicy: LOOPBACK_ALLOWED, lookup: dns });

  const url = `http://hooks.internal.test:${receiver.port}/hooks`;
  const outcome = await client.post({ url, headers: HEADERS, body: BODY });

  assert.equal(verdictOf(outcome), "delivered");
  assert.equal(host, `hooks.internal.test:${receiver.port}`);
  assert.deepEqual(dns.calls, ["hooks.internal.test"]);
});

test("the connection goes to the address that was checked, whatever a second lookup says", async (t) => {
  // 127.0.0.2 stands in for a public address (the only one allowed); 127.0.0.1 for an internal
  // service on the same port, which a rebinding resolver answers from its second call on.
  const vetted = createAddressPolicy({ allowedCidrs: [{ address: "127.0.0.2", prefix: 32 }] });
  const [publicSide, internal] = await twoServersOnOnePort(t);
  const dns = fakeDns((_hostname, call) => (call === 1 ? ["127.0.0.2"] : ["127.0.0.1"]));
  const client = clientFor(t, { addressPolicy: vetted, lookup: dns });
  const url = `http://rebind.test:${publicSide.port}/hooks`;

  // One lookup per connection, and the socket connects to what it answered: were the name
  // resolved again between check and connect, the internal server would get the request.
  assert.equal(verdictOf(await client.post({ url, headers: HEADERS, body: BODY })), "delivered");
  assert.equal(dns.calls.length, 1);
  assert.equal(publicSide.connections(), 1);
  assert.equal(internal.connections(), 0);

  // Every new connection is vetted again: this time the answer is refused.
  await publicSide.close();
  expectBlocked(
    await client.post({ url, headers: HEADERS, body: BODY }),
    "blocked: resolves to 127.0.0.1, a loopback address",
  );
  assert.equal(dns.calls.length, 2);
  assert.equal(internal.connections(), 0);
});

test("TLS keeps the hostname for SNI while connecting to the vetted address", async (t) => {
  let clientHello: Buffer = Buffer.alloc(0);
  const tlsReceiver = await startTcpServer((socket) => {
    socket.once("data", (chunk: Buffer) => {
      clientHello = chunk;
      socket.destroy();
    });
  });
  t.after(() => tlsReceiver.close());
  const dns = fakeDns(() => ["127.0.0.1"]);
  const client = clientFor(t, { addressPolicy: LOOPBACK_ALLOWED, lookup: dns });

  const outcome = await client.post({
    url: `https://hooks.test:${tlsReceiver.port}/`,
    headers: HEADERS,
    body: BODY,
  });

  assert.equal(outcome.kind, "error");
  // The server name extension is the only place a ClientHello carries the hostname.
  assert.ok(clientHello.includes("hooks.test"), "the ClientHello names hooks.test");
  assert.deepEqual(dns.calls, ["hooks.test"]);
});

test("a redirect to an internal address is not followed", async (t) => {
  const vetted = createAddressPolicy({ allowedCidrs: [{ address: "127.0.0.2", prefix: 32 }] });
  const internal = await serve(t);
  const redirecting = await serve(
    t,
    (req, res) => {
      const location = req.url === "/metadata" ? "http://169.254.169.254/latest/meta-data/" : internal.url;
      res.writeHead(307, { location }).end();
    },
    { host: "127.0.0.2" },
  );
  const client = clientFor(t, { addressPolicy: vetted });

  for (const path of ["/internal", "/metadata"]) {
    const outcome = await client.post({
      url: `http://127.0.0.2:${redirecting.port}${path}`,
      headers: HEADERS,
      body: BODY,
    });
    assert.equal(outcome.kind === "response" && outcome.status, 307);
    assert.equal(verdictOf(outcome), "retry");
  }
  assert.equal(internal.connections(), 0);
});

test("with an egress proxy every delivery goes through it and no local check is made", async (t) => {
  const receivedHosts: string[] = [];
  const receiver = await serve(t, (req, res) => {
    receivedHosts.push(req.headers.host ?? "");
    res.end("ok");
  });
  const proxy = await startConnectProxy(t, {
    "hooks.test": "127.0.0.1",
    "127.0.0.1": "127.0.0.1",
  });
  const dns = fakeDns(() => assert.fail("the proxy resolves names, not the client"));
  const client = clientFor(t, { egressProxy: proxy.url, lookup: dns, addressPolicy: createAddressPolicy() });

  const byName = await client.post({
    url: `http://hooks.test:${receiver.port}/hooks`,
    headers: HEADERS,
    body: BODY,
  });
  const byAddress = await client.post({
    url: `http://127.0.0.1:${receiver.port}/hooks`,
    headers: HEADERS,
    body: BODY,
  });
  const refused = await client.post({
    url: "http://169.254.169.254/latest/meta-data/",
    headers: HEADERS,
    body: BODY,
  });

  assert.equal(verdictOf(byName), "delivered");
  assert.equal(verdictOf(byAddress), "delivered");
  assert.deepEqual(receivedHosts, [`hooks.test:${receiver.port}`, `127.0.0.1:${receiver.port}`]);
  assert.equal(refused.kind === "error" && refused.error, "refused by the egress proxy: it answered 403");
  assert.equal(verdictOf(refused), "retry");
  assert.deepEqual(proxy.tunnels, [
    `hooks.test:${receiver.port}`,
    `127.0.0.1:${receiver.port}`,
    "169.254.169.254:80",
  ]);
  assert.deepEqual(dns.calls, []);
});

/** Two HTTP servers on one port: one on 127.0.0.2, one on 127.0.0.1. */
async function twoServersOnOnePort(t: TestContext): Promise<[TestServer, TestServer]> {
  for (let tries = 0; ; tries++) {
    const first = await serve(t, okHandler, { host: "127.0.0.2" });
    try {
      return [first, await serve(t, okHandler, { host: "127.0.0.1", port: first.port })];
    } catch (error) {
      await first.close();
      if (tries === 5) throw error;
    }
  }
}

/**
 * A tiny CONNECT proxy: tunnels to the address its table gives for the requested host and
 * answers 403 to anything else, as an egress proxy enforcing a policy would.
 */
async function startConnectProxy(t: TestContext, table: Record<string, string>) {
  const tunnels: string[] = [];
  const sockets = new Set<net.Socket>();
  const server = http.createServer((_req, res) => {
    res.writeHead(405).end();
  });
  server.on("connect", (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    sockets.add(client);
    client.on("error", () => {});
    const target = req.url ?? "";
    tunnels.push(target);
    const separator = target.lastIndexOf(":");
    const address = table[target.slice(0, separator)];
    if (address === undefined) {
      client.end("HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n");
      return;
    }
    const upstream = net.connect(Number(target.slice(separator + 1)), address, () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(upstream);
    upstream.on("error", () => client.destroy());
  });
  server.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  const { port } = server.address() as net.AddressInfo;
  t.after(async () => {
    for (const socket of sockets) socket.destroy();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return { url: `http://127.0.0.1:${port}`, tunnels };
}
