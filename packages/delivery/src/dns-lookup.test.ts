import assert from "node:assert/strict";
import { pbkdf2 } from "node:crypto";
import type { LookupAddress } from "node:dns";
import type { TestContext } from "node:test";
import { test } from "node:test";
import { promisify } from "node:util";
import { createAddressPolicy, createDnsLookup, createHttpClient, type DnsLookupOptions } from "./index.js";
import { startDnsServer } from "./test-dns-server.js";
import { startHttpServer } from "./test-helpers.js";

const LOOPBACK_ALLOWED = createAddressPolicy({ allowedCidrs: [{ address: "127.0.0.0", prefix: 8 }] });

async function nameserver(
  t: TestContext,
  records: Record<string, string[]>,
  silent: string[] = [],
  slow: Record<string, number> = {},
) {
  const server = await startDnsServer(records, silent, slow);
  t.after(() => server.close());
  return server;
}

/** A system resolver for the fallback path that answers one address and counts its calls. */
function systemAnswering(address: string): DnsLookupOptions["system"] & { calls: string[] } {
  const calls: string[] = [];
  const lookup = async (hostname: string): Promise<LookupAddress[]> => {
    calls.push(hostname);
    return [{ address, family: 4 }];
  };
  return Object.assign(lookup, { calls });
}

test("a name DNS knows resolves to its A and AAAA addresses, without the system resolver", async (t) => {
  const dns = await nameserver(t, { "hook.example": ["127.0.0.7", "::1"] });
  const system = systemAnswering("10.9.9.9");
  // A generous grace: this test is about both families, not about a late AAAA.
  const lookup = createDnsLookup({ servers: [dns.server], deadlineMs: 5000, aaaaGraceMs: 5000, system });

  assert.deepEqual(await lookup("hook.example"), [
    { address: "127.0.0.7", family: 4 },
    { address: "::1", family: 6 },
  ]);
  assert.deepEqual(system.calls, []);
});

test("a nameserver that drops AAAA queries does not hold up a name's A records", {
  timeout: 3000,
}, async (t) => {
  const dns = await nameserver(t, { "hook.example": ["127.0.0.7", "::1"] }, ["hook.example AAAA"]);
  // Were the AAAA query waited for, the lookup would take c-ares's longest query timeout (5 s).
  const lookup = createDnsLookup({ servers: [dns.server], deadlineMs: 25_000 });

  assert.deepEqual(await lookup("hook.example"), [{ address: "127.0.0.7", family: 4 }]);
});

test("concurrent lookups of one name share one resolution; a later one asks again", async (t) => {
  const dns = await nameserver(t, { "hook.example": ["127.0.0.7"] });
  const lookup = createDnsLookup({ servers: [dns.server], deadlineMs: 5000 });

  const answers = await Promise.all(
    Array.from({ length: 20 }, (_, i) => lookup(i % 2 === 0 ? "hook.example" : "HOOK.Example")),
  );
  assert.ok(answers.every((a) => a[0]?.address === "127.0.0.7"));
  assert.deepEqual([...dns.queries].sort(), ["hook.example A", "hook.example AAAA"]);

  await lookup("hook.example");
  assert.equal(dns.queries.length, 4, "no answer is kept past its lookup");
});

test("names DNS does not know, and single-label names, go to the system resolver (/etc/hosts)", async (t) => {
  const dns = await nameserver(t, {});
  const system = systemAnswering("10.1.2.3");
  const lookup = createDnsLookup({ servers: [dns.server], deadlineMs: 5000, system });

  assert.deepEqual(await lookup("receiver.internal"), [{ address: "10.1.2.3", family: 4 }]);
  assert.deepEqual(await lookup("receiver"), [{ address: "10.1.2.3", family: 4 }]);
  assert.deepEqual(system.calls, ["receiver.internal", "receiver"]);
  assert.ok(!dns.queries.some((q) => q.startsWith("receiver ")), "a single label is not asked of DNS");
});

test("at most two getaddrinfo calls run at once, however many names fall back to it", async (t) => {
  const dns = await nameserver(t, {});
  let running = 0;
  const releases: (() => void)[] = [];
  const system = async (): Promise<LookupAddress[]> => {
    running += 1;
    await new Promise<void>((resolve) => releases.push(resolve));
    running -= 1;
    return [{ address: "10.1.2.3", family: 4 }];
  };
  const lookup = createDnsLookup({ servers: [dns.server], deadlineMs: 5000, system });

  // Single-label names go to getaddrinfo straight away: six at once, if nothing held them back.
  const answers = Promise.all(Array.from({ length: 6 }, (_, i) => lookup(`hung-${i}`)));
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(running, 2);
  // Each answer lets the next call in.
  for (let answered = 0; answered < 6; answered++) {
    while (releases.length === 0) await new Promise((resolve) => setImmediate(resolve));
    releases.shift()?.();
    assert.ok(running <= 2);
  }
  assert.equal((await answers).length, 6);
});

test("lookups a nameserver never answers wait without holding threadpool threads, then fail as DNS timeouts", async (t) => {
  const dead = Array.from({ length: 12 }, (_, i) => `dead-${i}.example`);
  const dns = await nameserver(t, {}, dead);
  const system = systemAnswering("10.1.2.3");
  const lookup = createDnsLookup({ servers: [dns.server], deadlineMs: 1500, system });

  // More hung lookups than libuv's four threads: were each holding one, the threadpool work
  // below (as another endpoint's getaddrinfo would be) would wait for them to give up.
  const hung = dead.map((name) =>
    lookup(name).then(
      () => assert.fail(`${name} resolved`),
      (error: NodeJS.ErrnoException) => error,
    ),
  );
  const anyHungSettled = Promise.race(hung).then(() => "a hung lookup settled first");
  const threadpoolWork = Promise.all(
    Array.from({ length: 8 }, () => promisify(pbkdf2)("secret", "salt", 1000, 32, "sha256")),
  ).then(() => "threadpool work done");
  assert.equal(await Promise.race([threadpoolWork, anyHungSettled]), "threadpool work done");

  const errors = await Promise.all(hung);
  for (const [i, error] of errors.entries()) {
    assert.equal(error.code, "ETIMEOUT");
    assert.match(error.message, new RegExp(`DNS lookup of dead-${i}\\.example failed: ETIMEOUT`));
  }
  assert.deepEqual(system.calls, [], "no answer is not an unknown name: getaddrinfo is not tried");
});

test("an endpoint on a dead nameserver fails with a DNS error within its deadline while one on a live name delivers", async (t) => {
  const receiver = await startHttpServer((_req, res) => res.end("ok"));
  t.after(() => receiver.close());
  const dns = await nameserver(t, { "live.example": ["127.0.0.1"] }, ["dead.example"]);
  // The lookup the client builds by default, but asking the test's nameserver: within the
  // attempt's deadline, so the attempt says DNS failed, not "no response within 3000 ms".
  const client = createHttpClient({
    timeoutMs: 3000,
    maxResponseBytes: 1024,
    addressPolicy: LOOPBACK_ALLOWED,
    lookup: createDnsLookup({ servers: [dns.server], deadlineMs: 3000 }),
  });
  t.after(() => client.close());
  const post = (host: string) =>
    client.post({ url: `http://${host}:${receiver.port}/hook`, headers: {}, body: "{}" });

  const dead = Array.from({ length: 10 }, () => post("dead.example"));
  const live = await post("live.example");
  assert.equal(live.kind === "response" && live.status, 200);
  for (const outcome of await Promise.all(dead)) {
    assert.deepEqual(
      { kind: outcome.kind, error: outcome.kind === "error" ? outcome.error : undefined },
      { kind: "error", error: "DNS lookup failed: ETIMEOUT" },
    );
  }
});

test("a lookup waiting for the system resolver gives up within the deadline and is never started after", {
  timeout: 5000,
}, async (t) => {
  const dns = await nameserver(t, {});
  const calls: string[] = [];
  const releases: (() => void)[] = [];
  const system = async (hostname: string): Promise<LookupAddress[]> => {
    calls.push(hostname);
    if (hostname.startsWith("hung-")) await new Promise<void>((resolve) => releases.push(resolve));
    return [{ address: "10.1.2.3", family: 4 }];
  };
  const lookup = createDnsLookup({ servers: [dns.server], deadlineMs: 500, system });

  // One tenant's names hang getaddrinfo: two hold its slots, four wait behind them.
  const holding = [lookup("hung-0"), lookup("hung-1")];
  const waiting = [2, 3, 4, 5].map((i) =>
    lookup(`hung-${i}`).then(
      () => "resolved",
      (error: NodeJS.ErrnoException) => error.code,
    ),
  );
  assert.deepEqual(await Promise.all(waiting), ["ETIMEOUT", "ETIMEOUT", "ETIMEOUT", "ETIMEOUT"]);

  // The slots free up: another tenant's name is next, not the waits that already ended.
  for (const release of releases.splice(0)) release();
  await Promise.all(holding);
  assert.deepEqual(await lookup("intranet"), [{ address: "10.1.2.3", family: 4 }]);
  assert.deepEqual(calls, ["hung-0", "hung-1", "intranet"]);
});

test("with several dead nameservers a lookup still fails as a DNS timeout within the deadline", async (t) => {
  const servers = await Promise.all([1, 2, 3].map(() => nameserver(t, {}, ["dead.example"])));
  const lookup = createDnsLookup({ servers: servers.map((s) => s.server), deadlineMs: 1000 });

  const started = performance.now();
  const error = await lookup("dead.example").then(
    () => assert.fail("dead.example resolved"),
    (error: NodeJS.ErrnoException) => error,
  );
  const took = performance.now() - started;

  assert.equal(error.code, "ETIMEOUT");
  // Before, each nameserver had tries sized for the whole deadline: 2.8 s of a 1 s one.
  assert.ok(took < 1000, `the lookup failed after ${Math.round(took)} ms`);
});

test("DNS and the wait for getaddrinfo share one deadline: a slow 'no such name' does not buy a fresh wait", {
  timeout: 5000,
}, async (t) => {
  // DNS says it does not know the name only after 200 ms of the lookup's 300 (3/5 of 500).
  const dns = await nameserver(t, {}, [], { "late.example": 200 });
  const calls: string[] = [];
  const releases: (() => void)[] = [];
  const system = async (hostname: string): Promise<LookupAddress[]> => {
    calls.push(hostname);
    await new Promise<void>((resolve) => releases.push(resolve));
    return [{ address: "10.1.2.3", family: 4 }];
  };
  const lookup = createDnsLookup({ servers: [dns.server], deadlineMs: 500, system });
  const holding = [lookup("hung-0"), lookup("hung-1")];

  const started = performance.now();
  const code = await lookup("late.example").then(
    () => "resolved",
    (error: NodeJS.ErrnoException) => error.code,
  );
  const took = performance.now() - started;
  assert.equal(code, "ETIMEOUT");
  // Before, the wait for a slot began anew after DNS: 200 + 300 ms, past the attempt's share.
  assert.ok(took < 400, `gave up after ${Math.round(took)} ms`);

  for (const release of releases.splice(0)) release();
  await Promise.all(holding);
  assert.deepEqual(calls, ["hung-0", "hung-1"], "late.example was not looked up after giving up");
});
