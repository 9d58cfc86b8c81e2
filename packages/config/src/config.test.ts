import assert from "node:assert/strict";
import { test } from "node:test";
import { ConfigError, loadConfig, parseDurationList, parseRedisUrl } from "./index.js";

test("defaults describe the embedded service and the Standard Webhooks schedule", () => {
  const config = loadConfig({});
  assert.equal(config.databaseUrl, undefined);
  assert.equal(config.redis, undefined);
  assert.deepEqual(config.api, { host: "127.0.0.1", port: 50051 });
  assert.equal(config.delivery.timeoutMs, 10_000);
  assert.equal(config.queue.prefix, "bull");
  assert.equal(config.queue.endpointConcurrency, 2);
  assert.deepEqual(
    config.delivery.retryScheduleMs.map((ms) => ms / 1000),
    [5, 300, 1800, 7200, 18000, 36000, 36000],
  );
});

test("a retry schedule is read with units", () => {
  assert.deepEqual(parseDurationList("50ms,100ms, 200ms"), [50, 100, 200]);
  assert.deepEqual(
    loadConfig({ HOOKLINE_RETRY_SCHEDULE: "1s,2m" }).delivery.retryScheduleMs,
    [1000, 120_000],
  );
});

test("every field of a REDIS_URL is read: user, password, database and TLS", () => {
  assert.deepEqual(parseRedisUrl("rediss://hook%40user:p%3Ass@cache.internal:6380/3"), {
    host: "cache.internal",
    port: 6380,
    db: 3,
    username: "hook@user",
    password: "p:ss",
    tls: { servername: "cache.internal" },
  });
  assert.deepEqual(parseRedisUrl("redis://:secret@127.0.0.1"), {
    host: "127.0.0.1",
    port: 6379,
    db: 0,
    password: "secret",
  });
});

test("bad values are reported together, each naming its variable", () => {
  assert.throws(
    () =>
      loadConfig({
        HOOKLINE_DELIVERY_TIMEOUT_MS: "soon",
        HOOKLINE_RETRY_SCHEDULE: "5 parsecs",
        REDIS_URL: "http://x",
        HOOKLINE_API_ADDR: "nowhere",
        HOOKLINE_STALLED_AFTER: "500ms",
      }),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      const text = error.message;
      for (const name of [
        "HOOKLINE_DELIVERY_TIMEOUT_MS",
        "HOOKLINE_RETRY_SCHEDULE",
        "REDIS_URL",
        "HOOKLINE_API_ADDR",
        "HOOKLINE_STALLED_AFTER",
      ]) {
        assert.match(text, new RegExp(name));
      }
      return true;
    },
  );
});

test("allowed CIDR ranges and the egress proxy are read, and refused with the variable named", () => {
  const defaults = loadConfig({}).delivery;
  assert.deepEqual(defaults.allowedCidrs, []);
  assert.equal(defaults.egressProxy, undefined);

  const set = loadConfig({
    HOOKLINE_ALLOWED_CIDRS: " 127.0.0.0/8, ::1/128,10.1.2.3,",
    HOOKLINE_EGRESS_PROXY: "http://proxy.internal:3128",
  }).delivery;
  assert.deepEqual(set.allowedCidrs, [
    { address: "127.0.0.0", prefix: 8 },
    { address: "::1", prefix: 128 },
    { address: "10.1.2.3", prefix: 32 },
  ]);
  assert.equal(set.egressProxy, "http://proxy.internal:3128");

  for (const cidrs of [
    "127.1/8",
    "10.0.0.0/33",
    "::1/129",
    "10.0.0.0/",
    "10.0.0.0/8/8",
    "localhost",
    "10.0.0.0/-1",
  ]) {
    assert.throws(
      () => loadConfig({ HOOKLINE_ALLOWED_CIDRS: cidrs }),
      (error: unknown) =>
        error instanceof ConfigError && /^ {2}HOOKLINE_ALLOWED_CIDRS has /m.test(error.message),
      cidrs,
    );
  }
  for (const proxy of [
    "proxy:3128",
    "socks5://proxy:1080",
    "http://proxy:3128/path",
    "http://u:secret@proxy:3128/x",
  ]) {
    assert.throws(
      () => loadConfig({ HOOKLINE_EGRESS_PROXY: proxy }),
      (error: unknown) =>
        error instanceof ConfigError &&
        error.message.includes("HOOKLINE_EGRESS_PROXY") &&
        !error.message.includes("secret"),
      proxy,
    );
  }
});

test("HOOKLINE_PORTAL_KEY is read when long enough; unset leaves the api to draw a random key", () => {
  assert.equal(loadConfig({}).portalKey, undefined);
  const key = "k".repeat(32);
  assert.equal(loadConfig({ HOOKLINE_PORTAL_KEY: key }).portalKey, key);
  assert.throws(
    () => loadConfig({ HOOKLINE_PORTAL_KEY: "short-key" }),
    (error: unknown) =>
      error instanceof ConfigError &&
      error.problems.some((p) => p.startsWith("HOOKLINE_PORTAL_KEY") && !p.includes("short-key")),
  );
});
