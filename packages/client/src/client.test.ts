import assert from "node:assert/strict";
import { once } from "node:events";
import http2 from "node:http2";
import { syncBuiltinESMExports } from "node:module";
import net, { type AddressInfo } from "node:net";
import { test } from "node:test";
import { Code, ConnectError } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { AttemptLogService, EndpointService } from "@hookline/contracts";
import { createTestBackend, readTestSettings, spawnHookline, startCuttableProxy } from "@hookline/testkit";
import { createHooklineClient, toBaseUrl } from "./client.js";
import { type ReconnectInfo, watchAttempts } from "./watch.js";

const settings = readTestSettings(process.env);

test("an address is host:port or an http(s) URL", () => {
  assert.equal(toBaseUrl("127.0.0.1:50051"), "http://127.0.0.1:50051");
  assert.equal(toBaseUrl("localhost:1"), "http://localhost:1");
  assert.equal(toBaseUrl("[::1]:50051"), "http://[::1]:50051");
  assert.equal(toBaseUrl("https://hookline.example.com/"), "https://hookline.example.com");
  assert.equal(toBaseUrl("http://10.0.0.1:8080/base/"), "http://10.0.0.1:8080/base");
  assert.throws(() => toBaseUrl(""), /empty/);
  assert.throws(() => toBaseUrl("ftp://example.com"), /http or https/);
  assert.throws(() => toBaseUrl("exa mple:1"), /neither host:port nor/);
});

test("the token goes out as a bearer authorization header, on both transports", async () => {
  // A stand-in api that echoes the header back, so the test sees exactly what was sent.
  const server = http2.createServer(
    connectNodeAdapter({
      routes: (router) =>
        router.service(EndpointService, {
          getEndpoint: (_req, context) => ({
            endpoint: { id: "seen", description: context.requestHeader.get("authorization") ?? "" },
          }),
        }),
    }),
  );
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const address = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    for (const transport of ["grpc", "connect"] as const) {
      const client = createHooklineClient({ address, token: "s3cret", transport });
      const { endpoint } = await client.endpoints.getEndpoint({ tenantId: "t", id: "x" });
      assert.equal(endpoint?.description, "Bearer s3cret", transport);
      client.close();
    }
    const anonymous = createHooklineClient({ address });
    const { endpoint } = await anonymous.endpoints.getEndpoint({ tenantId: "t", id: "x" });
    assert.equal(endpoint?.description, "");
    anonymous.close();
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});

test("a GOAWAY on an idle connection, with a call right behind it, does not crash the process", async () => {
  const server = http2.createServer(
    connectNodeAdapter({
      routes: (router) => router.service(EndpointService, { getEndpoint: () => ({ endpoint: { id: "x" } }) }),
    }),
  );
  const serverSessions: http2.ServerHttp2Session[] = [];
  server.on("session", (session) => serverSessions.push(session));
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  // The client's own sessions, to start the next call exactly when the GOAWAY arrives: that is
  // when connect-node moves on from the old session, whose error Node raises only later.
  const clientSessions: http2.ClientHttp2Session[] = [];
  const connect = http2.connect;
  http2.connect = ((...args: Parameters<typeof connect>) => {
    const session = connect(...args);
    clientSessions.push(session);
    return session;
  }) as typeof connect;
  syncBuiltinESMExports();
  const crashes: unknown[] = [];
  const onUncaught = (error: unknown) => crashes.push(error);
  process.on("uncaughtException", onUncaught);
  const client = createHooklineClient({ address: `127.0.0.1:${(server.address() as AddressInfo).port}` });
  try {
    await client.endpoints.getEndpoint({ tenantId: "t", id: "x" });
    const [session] = clientSessions;
    assert.ok(session, "the client opened a session");
    // The old session's late error is raised once its socket has closed.
    // (Not events.once: it listens for 'error' too, and would hide the crash.)
    const closed = new Promise((resolve) => session.once("close", resolve));
    const next = new Promise((resolve) => {
      session.once("goaway", () => resolve(client.endpoints.getEndpoint({ tenantId: "t", id: "x" })));
    });
    for (const s of serverSessions) s.goaway();
    const { endpoint } = (await next) as { endpoint?: { id: string } };
    assert.equal(endpoint?.id, "x", "the next call goes out on a new connection");
    await closed;
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(crashes, []);
  } finally {
    process.off("uncaughtException", onUncaught);
    http2.connect = connect;
    syncBuiltinESMExports();
    client.close();
    for (const s of serverSessions) s.destroy();
    await new Promise((resolve) => server.close(resolve));
  }
});

test("a watch whose connection is reset after the server's GOAWAY reconnects instead of hanging", {
  timeout: 20_000,
}, async () => {
  // A server that keeps every watch open and sends nothing, as a quiet api does.
  let goneAway = false;
  let proxy: Awaited<ReturnType<typeof startCuttableProxy>> | undefined;
  const server = http2.createServer(
    connectNodeAdapter({
      routes: (router) =>
        router.service(AttemptLogService, {
          async *watchAttempts(_req, context) {
            // Once, on the first watch: the api going away (GOAWAY), then its connection reset.
            // Node closed the client's stream with no error, and the watch waited on it forever.
            if (!goneAway) {
              goneAway = true;
              for (const session of serverSessions) session.goaway();
              setTimeout(() => proxy?.reset(), 100);
            }
            await new Promise((resolve) => context.signal.addEventListener("abort", resolve));
          },
        }),
    }),
  );
  const serverSessions: http2.ServerHttp2Session[] = [];
  server.on("session", (session) => {
    serverSessions.push(session);
    session.on("error", () => {});
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  proxy = await startCuttableProxy(`127.0.0.1:${(server.address() as AddressInfo).port}`);
  const client = createHooklineClient({ address: proxy.address });
  const stop = new AbortController();
  const reconnected = new Promise<ReconnectInfo>((resolve) => {
    const watch = watchAttempts(client, { tenantId: "t" }, { signal: stop.signal, onReconnect: resolve });
    void (async () => {
      for await (const _ of watch);
    })();
  });
  try {
    const info = await reconnected;
    assert.equal(info.error?.code, Code.Aborted);
  } finally {
    stop.abort();
    client.close();
    await proxy.close();
    for (const session of serverSessions) session.destroy();
    await new Promise((resolve) => server.close(resolve));
  }
});

test("calls whose connection is reset fail as a reset, never as cancelled by the caller", async () => {
  // Accepts connections and resets each one at once (TCP RST). Some calls see the reset while
  // their stream is open, and Node closes that stream with CANCEL and no error: before, those
  // failed as CANCELED ("http/2 stream closed with error code CANCEL"), the code of a call its
  // caller gave up, and a watch would not have resumed. Many clients at once make such a call
  // in every round here.
  const server = net.createServer((socket) => socket.resetAndDestroy());
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const address = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const outcomes = new Map<string, number>();
    for (let round = 0; round < 5; round++) {
      await Promise.all(
        Array.from({ length: 20 }, async () => {
          const client = createHooklineClient({ address });
          try {
            await client.endpoints.listEndpoints({ tenantId: "t" }, { timeoutMs: 10_000 });
            assert.fail("a reset connection answered");
          } catch (error) {
            const e = ConnectError.from(error);
            const cause = (e.cause as { code?: unknown } | undefined)?.code;
            const outcome = `${Code[e.code]} (${String(cause)})`;
            outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
          } finally {
            client.close();
          }
        }),
      );
    }
    for (const outcome of outcomes.keys()) {
      assert.match(outcome, /^(Unavailable|Aborted) \(ECONNRESET\)$/, JSON.stringify([...outcomes]));
    }
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});

test(`both transports talk to a running Hookline (${settings.kind} backend)`, async () => {
  const backend = await createTestBackend(settings);
  const service = await spawnHookline("standalone", { ...backend.env, HOOKLINE_API_ADDR: "127.0.0.1:0" });
  try {
    for (const transport of ["grpc", "connect"] as const) {
      const client = createHooklineClient({ address: service.address ?? "", transport });
      try {
        const tenantId = `t_${transport}`;
        const { endpoint } = await client.endpoints.createEndpoint({
          tenantId,
          url: "https://example.com/h",
        });
        assert.match(endpoint?.secret ?? "", /^whsec_/);
        const got = await client.endpoints.getEndpoint({ tenantId, id: endpoint?.id ?? "" });
        assert.equal(got.endpoint?.url, "https://example.com/h");
        const emitted = await client.emit.emit({ tenantId, eventType: "a.b", dataJson: "{}" });
        assert.deepEqual(emitted.deliveryIds.length, 1);
      } finally {
        client.close();
      }
    }
  } finally {
    await service.stop();
    await backend.dispose();
  }
});
