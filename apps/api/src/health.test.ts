import assert from "node:assert/strict";
import net from "node:net";
import { after, before, describe, test } from "node:test";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { loadConfig } from "@hookline/config";
import { Health, HealthCheckResponse_ServingStatus as Status } from "@hookline/contracts";
import { createLogger, createSignal, type Infrastructure, openInfrastructure } from "@hookline/runtime";
import { connectStore, type StoreConnection } from "@hookline/store";
import { createTestBackend, type TestBackend } from "@hookline/testkit";
import { type ApiServer, startApiFromConfig } from "./compose.js";
import { PROTO_DIR } from "./test-helpers.js";

type PgConfig = StoreConnection["pgConfig"];

/** A TCP relay between the api and the database that a test can cut and restore. */
class TcpProxy {
  private server: net.Server | undefined;
  private readonly sockets = new Set<net.Socket>();
  port = 0;

  constructor(private readonly target: { host: string; port: number }) {}

  async open(): Promise<void> {
    const server = net.createServer((client) => {
      const upstream = net.connect(this.target.port, this.target.host);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on("close", () => this.sockets.delete(socket));
        socket.on("error", () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.port, "127.0.0.1", () => resolve());
    });
    this.port = (server.address() as net.AddressInfo).port;
    this.server = server;
  }

  /** Refuses new connections and cuts the open ones: the database has gone away. */
  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    const closed = new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    for (const socket of this.sockets) socket.destroy();
    await closed;
  }
}

function targetOf(config: PgConfig): { host: string; port: number } {
  if (config.connectionString) {
    const url = new URL(config.connectionString);
    return { host: url.hostname, port: Number(url.port || 5432) };
  }
  return { host: String(config.host ?? "127.0.0.1"), port: Number(config.port ?? 5432) };
}

function urlThrough(config: PgConfig, port: number): string {
  const url = new URL(
    config.connectionString ?? `postgres://${config.user ?? "postgres"}@x/${config.database}`,
  );
  url.hostname = "127.0.0.1";
  url.port = String(port);
  return url.toString();
}

describe("grpc.health.v1.Health follows the store", () => {
  let backend: TestBackend;
  let infra: Infrastructure;
  let proxy: TcpProxy;
  let store: StoreConnection;
  let api: ApiServer;
  let health: ReturnType<typeof createClient<typeof Health>>;

  // The api reaches the store only through the proxy; on the embedded backend the proxy sits in
  // front of the loopback port that serves the in-process PGlite.
  before(async () => {
    backend = await createTestBackend();
    const config = loadConfig({ ...backend.env, HOOKLINE_API_ADDR: "127.0.0.1:0" });
    const log = createLogger("health-test", () => {});
    infra = await openInfrastructure(config, log);
    proxy = new TcpProxy(targetOf(infra.store.pgConfig));
    await proxy.open();
    store = await connectStore(
      { databaseUrl: urlThrough(infra.store.pgConfig, proxy.port) },
      { onError: () => {} },
    );
    api = await startApiFromConfig(config, { ...infra, store }, log, { attempts: createSignal() });
    health = createClient(Health, createGrpcTransport({ baseUrl: `http://127.0.0.1:${api.port}` }));
  });
  after(async () => {
    await api?.close();
    await proxy?.open().catch(() => {});
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
    await proxy.close();
    await seenOnce("NOT_SERVING", 1);
    await eventually("", Status.NOT_SERVING);
    await eventually("hookline.v1.EndpointService", Status.NOT_SERVING);

    await proxy.open();
    await seenOnce("SERVING", 2);
    await eventually("", Status.SERVING);
    watching.abort();
    await watched;
    assert.deepEqual(seen, ["SERVING", "NOT_SERVING", "SERVING"]);
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
