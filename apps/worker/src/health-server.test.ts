import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ConfigError, loadConfig } from "@hookline/config";
import { createLogger, type Infrastructure, openInfrastructure } from "@hookline/runtime";
import { createTestBackend, readTestSettings, spawnHookline, type TestBackend } from "@hookline/testkit";
import {
  type HealthServer,
  type ReadinessChecks,
  startHealthServer,
  workerReadiness,
} from "./health-server.js";

const settings = readTestSettings(process.env);

async function get(
  address: string,
  path: string,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`http://${address}${path}`);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe("HOOKLINE_WORKER_HEALTH_ADDR", () => {
  test("is off by default, host:port when set, and a clear error when malformed", () => {
    assert.equal(loadConfig({}).workerHealth, undefined);
    assert.deepEqual(loadConfig({ HOOKLINE_WORKER_HEALTH_ADDR: "0.0.0.0:8081" }).workerHealth, {
      host: "0.0.0.0",
      port: 8081,
    });
    assert.throws(
      () => loadConfig({ HOOKLINE_WORKER_HEALTH_ADDR: "8081" }),
      (error: unknown) =>
        error instanceof ConfigError &&
        /HOOKLINE_WORKER_HEALTH_ADDR "8081" is not host:port/.test(error.message),
    );
  });
});

describe("the worker's health server", () => {
  let backend: TestBackend;
  let infra: Infrastructure | undefined;
  let server: HealthServer;
  let readiness: ReadinessChecks | undefined;
  let address: string;
  before(async () => {
    backend = await createTestBackend(settings);
    server = await startHealthServer({ host: "127.0.0.1", port: 0, readiness: () => readiness });
    address = `${server.host}:${server.port}`;
    infra = await openInfrastructure(
      loadConfig(backend.env),
      createLogger("health-test", () => {}),
    );
  });
  after(async () => {
    await server?.close();
    await infra?.close();
    await backend?.dispose();
  });

  test("/healthz answers at once; /readyz waits until the worker has started", async () => {
    assert.deepEqual(await get(address, "/healthz"), { status: 200, body: { status: "ok" } });
    assert.deepEqual(await get(address, "/readyz"), { status: 503, body: { status: "starting" } });
    assert.equal((await get(address, "/metrics")).status, 404);
  });

  test("/readyz is 200 while the store and the queue backend answer, 503 naming them once they are gone", async () => {
    assert.ok(infra);
    readiness = workerReadiness(infra);
    assert.deepEqual(await get(address, "/readyz"), {
      status: 200,
      body: { status: "ready", checks: { store: true, queue: true } },
    });
    await infra.close();
    infra = undefined;
    assert.deepEqual(await get(address, "/readyz"), {
      status: 503,
      body: { status: "not ready", checks: { store: false, queue: false } },
    });
    assert.equal((await get(address, "/healthz")).status, 200, "the process itself is still alive");
  });

  test("a check that hangs counts as failed within the timeout", async () => {
    const slow = await startHealthServer({
      host: "127.0.0.1",
      port: 0,
      timeoutMs: 100,
      readiness: () => ({ store: () => new Promise<boolean>(() => {}), queue: async () => true }),
    });
    try {
      const started = Date.now();
      const { status, body } = await get(`${slow.host}:${slow.port}`, "/readyz");
      assert.equal(status, 503);
      assert.deepEqual(body.checks, { store: false, queue: true });
      assert.ok(Date.now() - started < 2000);
    } finally {
      await slow.close();
    }
  });
});

describe("a worker process with HOOKLINE_WORKER_HEALTH_ADDR", () => {
  test("serves /healthz and /readyz", async (t) => {
    if (settings.kind === "embedded") {
      // A separate worker process needs DATABASE_URL: embedded PGlite belongs to one process.
      t.skip("a worker process needs PostgreSQL; the servers pass runs this");
      return;
    }
    const backend = await createTestBackend(settings);
    const worker = await spawnHookline("worker", {
      ...backend.env,
      HOOKLINE_WORKER_HEALTH_ADDR: "127.0.0.1:0",
    });
    try {
      const ready = worker.log.find((line) => line.includes('"worker ready"'));
      const health = (JSON.parse(ready ?? "{}") as { health?: string }).health;
      assert.ok(health, `the ready line names the health address: ${ready}`);
      assert.equal((await get(health, "/healthz")).status, 200);
      assert.deepEqual(await get(health, "/readyz"), {
        status: 200,
        body: { status: "ready", checks: { store: true, queue: true } },
      });
    } finally {
      assert.equal(await worker.stop(), 0);
      await backend.dispose();
    }
  });
});
