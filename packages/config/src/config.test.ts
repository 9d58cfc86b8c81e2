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
  assert.equal(config.queue.endpointConcurrency, "adaptive");
  assert.equal(config.queue.endpointMaxConcurrency, 50);
  assert.deepEqual(
    config.delivery.retryScheduleMs.map((ms) => ms / 1000),
    [5, 300, 1800, 7200, 18000, 36000, 36000],
  );
});

test("endpoint concurrency is adaptive or a fixed number, and its ceiling is bounded", () => {
  assert.equal(loadConfig({ HOOKLINE_ENDPOINT_CONCURRENCY: "8" }).queue.endpointConcurrency, 8);
  assert.equal(loadConfig({ HOOKLINE_ENDPOINT_MAX_CONCURRENCY: "200" }).queue.endpointMaxConcurrency, 200);
  assert.throws(
    () => loadConfig({ HOOKLINE_ENDPOINT_CONCURRENCY: "auto", HOOKLINE_ENDPOINT_MAX_CONCURRENCY: "0" }),
    (error: unknown) =>
      error instanceof ConfigError &&
      error.problems.length === 2 &&
      error.problems[0] ===
        'HOOKLINE_ENDPOINT_CONCURRENCY must be "adaptive" or a whole number from 1 to 1000' &&
      error.problems[1]?.startsWith("HOOKLINE_ENDPOINT_MAX_CONCURRENCY ") === true,
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

test("a REDIS_URL whose password holds an unencoded '/' is refused without echoing any of it", () => {
  assert.throws(
    () => loadConfig({ REDIS_URL: "redis://hook:pa@ss/word-tail@cache.internal:6379" }),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.match(error.message, /REDIS_URL has a database that is not a number .*%2F/);
      assert.ok(!/word-tail|cache\.internal/.test(error.message), error.message);
      return true;
    },
  );
});

test("a HOOKLINE_RETRY_SCHEDULE that lists no wait is refused, not read as 'never retry'", () => {
  assert.throws(
    () => loadConfig({ HOOKLINE_RETRY_SCHEDULE: " , " }),
    /HOOKLINE_RETRY_SCHEDULE must list at least one wait/,
  );
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

test("a token configured twice, holding whitespace or shaped as a portal link, is refused at start naming the entry, never the token", () => {
  const token = "s3cret-token-0123456789";
  const refused: [string, string][] = [
    [`tenant:acme:${token},tenant:evil:${token}`, "HOOKLINE_API_TOKENS entry 2 repeats the token of entry 1"],
    [`${token},tenant:acme:${token}`, "HOOKLINE_API_TOKENS entry 2 repeats the token of entry 1"],
    ["admin-token 0123456789abcdef", "HOOKLINE_API_TOKENS entry 1 has whitespace in its token"],
    [
      `${token}, tenant:acme:tok\ten-0123456789abcdef`,
      "HOOKLINE_API_TOKENS entry 2 has whitespace in its token",
    ],
    // The api reads such a bearer token as a portal link: it could never be accepted.
    [`${token},hlp1.${token}`, "HOOKLINE_API_TOKENS entry 2 has a token starting with hlp1."],
    [`tenant:acme:hlp1.${token}`, "HOOKLINE_API_TOKENS entry 1 has a token starting with hlp1."],
  ];
  for (const [value, message] of refused) {
    assert.throws(
      () => loadConfig({ HOOKLINE_API_TOKENS: value }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.ok(error.message.includes(message), `${value}: ${error.message}`);
        assert.ok(!error.message.includes(token), "the token is never echoed");
        return true;
      },
    );
  }
  const ok = loadConfig({ HOOKLINE_API_TOKENS: `${token}, tenant:acme:${token}-acme` }).apiTokens;
  assert.deepEqual(ok, [{ token }, { token: `${token}-acme`, tenantId: "acme" }]);
});

test("limits have sane defaults and bad values name their variable", () => {
  const config = loadConfig({});
  assert.equal(config.maxEndpointsPerTenant, 1000);
  assert.deepEqual(config.connections, {
    maxConnections: 1000,
    handshakeTimeoutMs: 10_000,
    idleTimeoutMs: 300_000,
    maxConcurrentStreams: 100,
    maxHeaderBytes: 16_384,
  });
  assert.deepEqual(config.streams, { perToken: 20, perTenant: 50, total: 200 });
  assert.equal(config.maxHealthWatches, 100);
  assert.equal(config.databaseTimeoutMs, 30_000);
  assert.equal(loadConfig({ HOOKLINE_DATABASE_TIMEOUT: "2s" }).databaseTimeoutMs, 2000);
  // Past about 24.8 days PostgreSQL refuses the statement timeout, and every store call failed.
  assert.throws(
    () => loadConfig({ HOOKLINE_DATABASE_TIMEOUT: "25d" }),
    /HOOKLINE_DATABASE_TIMEOUT must be from 100ms to 1d/,
  );
  assert.equal(loadConfig({ HOOKLINE_MAX_ENDPOINTS_PER_TENANT: "10000" }).maxEndpointsPerTenant, 10_000);
  assert.throws(
    () =>
      loadConfig({
        HOOKLINE_MAX_ENDPOINTS_PER_TENANT: "0",
        HOOKLINE_MAX_CONNECTIONS: "lots",
        HOOKLINE_HANDSHAKE_TIMEOUT: "0s",
        HOOKLINE_MAX_STREAMS: "-1",
        HOOKLINE_MAX_HEALTH_WATCHES: "0",
        // Loops that would spin, and settings that would disable or purge everything at once.
        HOOKLINE_SWEEP_INTERVAL: "0s",
        HOOKLINE_WATCH_POLL_INTERVAL: "1ms",
        HOOKLINE_RETENTION: "0s",
        HOOKLINE_DISABLE_AFTER: "0ms",
        // A timeout shorter than a round trip would fail every statement.
        HOOKLINE_DATABASE_TIMEOUT: "5ms",
      }),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      for (const name of [
        "HOOKLINE_MAX_ENDPOINTS_PER_TENANT",
        "HOOKLINE_MAX_CONNECTIONS",
        "HOOKLINE_HANDSHAKE_TIMEOUT",
        "HOOKLINE_MAX_STREAMS",
        "HOOKLINE_MAX_HEALTH_WATCHES",
        "HOOKLINE_SWEEP_INTERVAL",
        "HOOKLINE_WATCH_POLL_INTERVAL",
        "HOOKLINE_RETENTION",
        "HOOKLINE_DISABLE_AFTER",
        "HOOKLINE_DATABASE_TIMEOUT",
      ]) {
        assert.ok(error.message.includes(name), `${name} is named`);
      }
      return true;
    },
  );
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
