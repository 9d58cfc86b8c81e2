import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { loadConfig } from "@hookline/config";
import { EmitService, Health, HealthCheckResponse_ServingStatus as Status } from "@hookline/contracts";
import { createLogger, type Infrastructure, openInfrastructure } from "@hookline/runtime";
import { connectStore, type StoreConnection } from "@hookline/store";
import {
  type CuttableProxy,
  createTestBackend,
  readTestSettings,
  startDatabaseProxy,
  type TestBackend,
} from "@hookline/testkit";
import { type ApiServer, startApiFromConfig } from "./compose.js";
import { PROTO_DIR } from "./test-helpers.js";

const settings = readTestSettings(process.env);
// The api's store timeout (HOOKLINE_DATABASE_TIMEOUT) in these tests.
const STORE_TIMEOUT_MS = 1000;

describe("grpc.health.v1.Health follows the store", () => {
  let backend: TestBackend;
  let infra: Infrastructure;
  let proxy: CuttableProxy;
  let store: StoreConnection;
  let api: ApiServer;
  let health: ReturnType<typeof createClient<typeof Health>>;
  let emits: ReturnType<typeof createClient<typeof EmitService>>;
  const logLines: string[] = [];

  // The api reaches the store only through the proxy; on the embedded backend the proxy sits in
  // front of the loopback port that serves the in-process PGlite.
  before(async () => {
    backend = await createTestBackend(settings);
    const config = loadConfig({ ...backend.env, HOOKLINE_API_ADDR: "127.0.0.1:0" });
    const log = createLogger("health-test", (line) => logLines.push(line));
    infra = await openInfrastructure(config, log);
    const through = await startDatabaseProxy(infra.store.pgConfig);
    proxy = through.proxy;
    store = await connectStore(
      { databaseUrl: String(through.config.connectionString) },
      { timeoutMs: STORE_TIMEOUT_MS, onError: () => {} },
    );
    api = await startApiFromConfig(config, { ...infra, store }, log);
    const transport = createGrpcTransport({ baseUrl: `http://127.0.0.1:${api.port}` });
    health = createClient(Health, transport);
    emits = createClient(EmitService, transport);
  });
  after(async () => {
    await api?.close();
    await proxy?.close();
    await store?.close();
    await infra?.close();
    await backend?.dispose();
  });

  async function statusOf(service: string): Promise<Status> {
    return (await health.check({ service }, { timeoutMs: 5000 })).status;
  }

  async function eventually(service: string, want: Status): Promise<void> {
    const deadline = Date.now() + 15_000;
    let got = await statusOf(service);
    while (got !== want && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      got = await statusOf(service);
    }
    assert.equal(Status[got], Status[want], `health of "${service}"`);
  }

  test("the server and each Hookline service are SERVING; an unknown service is NOT_FOUND", async () => {
    for (const service of [
      "",
      "hookline.v1.EndpointService",
      "hookline.v1.EmitService",
      "hookline.v1.AttemptLogService",
      "hookline.v1.PortalService",
    ]) {
      assert.equal(Status[await statusOf(service)], "SERVING", `"${service}"`);
    }
    await assert.rejects(health.check({ service: "nope.v1.Nothing" }), /unknown service "nope.v1.Nothing"/);
    const listed = await health.list({});
    assert.deepEqual(Object.keys(listed.statuses).sort(), [
      "",
      "hookline.v1.AttemptLogService",
      "hookline.v1.EmitService",
      "hookline.v1.EndpointService",
      "hookline.v1.PortalService",
    ]);
  });

  test("a stock grpc-js client (what probes and grpc_health_probe use) reads SERVING", async () => {
    const definition = protoLoader.loadSync("grpc/health/v1/health.proto", {
      includeDirs: [PROTO_DIR],
      enums: String,
    });
    const loaded = grpc.loadPackageDefinition(definition) as unknown as {
      grpc: { health: { v1: { Health: grpc.ServiceClientConstructor } } };
    };
    const client = new loaded.grpc.health.v1.Health(
      `127.0.0.1:${api.port}`,
      grpc.credentials.createInsecure(),
    ) as unknown as grpc.Client & {
      Check(request: object, callback: (error: Error | null, value: { status: string }) => void): void;
    };
    try {
      const response = await new Promise<{ status: string }>((resolve, reject) =>
        client.Check({ service: "" }, (error, value) => (error ? reject(error) : resolve(value))),
      );
      assert.equal(response.status, "SERVING");
    } finally {
      client.close();
    }
  });

  test("NOT_SERVING while the database is unreachable, SERVING again when it returns; Watch streams both", async () => {
    const watching = new AbortController();
    const seen: string[] = [];
    const stream = health.watch({ service: "hookline.v1.EmitService" }, { signal: watching.signal });
    const watched = (async () => {
      try {
        for await (const { status } of stream) seen.push(Status[status]);
      } catch (error) {
        if (!watching.signal.aborted) throw error;
      }
    })();
    const seenOnce = async (status: string, count: number) => {
      const deadline = Date.now() + 15_000;
      while (seen.filter((s) => s === status).length < count && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.equal(seen.filter((s) => s === status).length, count, `Watch saw ${seen.join(", ")}`);
    };

    await seenOnce("SERVING", 1);
    proxy.cut();
    await seenOnce("NOT_SERVING", 1);
    await eventually("", Status.NOT_SERVING);
    await eventually("hookline.v1.EndpointService", Status.NOT_SERVING);

    proxy.restore();
    await seenOnce("SERVING", 2);
    await eventually("", Status.SERVING);
    watching.abort();
    await watched;
    assert.deepEqual(seen, ["SERVING", "NOT_SERVING", "SERVING"]);
  });

  test("while the database answers nothing, Emit answers UNAVAILABLE within the store timeout and Health NOT_SERVING; both recover", {
    timeout: 30_000,
  }, async () => {
    const emit = (eventId: string) =>
      emits.emit(
        { tenantId: "t-frozen", eventId, eventType: "order.paid", dataJson: "{}" },
        { timeoutMs: 20_000 },
      );
    await emit("before");
    proxy.freeze();
    try {
      const started = performance.now();
      const refused = await emit("during").then(
        () => assert.fail("the Emit was answered"),
        (error: unknown) => ConnectError.from(error),
      );
      const ms = performance.now() - started;
      assert.equal(Code[refused.code], "Unavailable", refused.message);
      assert.match(refused.message, /the database is unavailable; try again/);
      // The statement's timeout and one more second, then at most the connect timeout of a retry.
      assert.ok(ms < STORE_TIMEOUT_MS * 4, `answered after ${Math.round(ms)} ms`);
      await eventually("hookline.v1.EmitService", Status.NOT_SERVING);
      // The operator's side of the client's UNAVAILABLE: a line saying which call and why.
      const warned = logLines
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .filter((line) => line.message === "the database is unavailable; calls are answered UNAVAILABLE");
      assert.equal(warned.length, 1, logLines.join("\n"));
      assert.equal(warned[0]?.procedure, "Emit");
      assert.match(String(warned[0]?.error), /the database did not answer within \d+ ms/);
    } finally {
      proxy.thaw();
    }
    await eventually("hookline.v1.EmitService", Status.SERVING);
    const again = await emit("during");
    assert.equal(again.eventId, "during");
  });

  test("Watch on an unknown service answers SERVICE_UNKNOWN and stays open", async () => {
    const watching = new AbortController();
    const stream = health.watch({ service: "nope.v1.Nothing" }, { signal: watching.signal });
    const iterator = stream[Symbol.asyncIterator]();
    const first = await iterator.next();
    assert.equal(first.done, false);
    assert.equal(Status[first.value.status], "SERVICE_UNKNOWN");
    const next = iterator.next().catch(() => ({ done: true, aborted: true }));
    const pending = await Promise.race([
      next,
      new Promise((resolve) => setTimeout(() => resolve("open"), 300)),
    ]);
    assert.equal(pending, "open");
    watching.abort();
    assert.deepEqual(await next, { done: true, aborted: true });
  });
});
