import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import { loadConfig } from "@hookline/config";
import { createLogger, type Infrastructure, openInfrastructure } from "@hookline/runtime";
import { generateSecret } from "@hookline/signing";
import { connectStore, createEndpoint, emitEvent, type StoreConnection } from "@hookline/store";
import {
  type CuttableProxy,
  createTestBackend,
  eventually,
  type Receiver,
  readTestSettings,
  startDatabaseProxy,
  startReceiver,
  type TestBackend,
} from "@hookline/testkit";
import { startWorkerFromConfig } from "./compose.js";

const settings = readTestSettings(process.env);
// Long enough that BullMQ's doubling backoff (1, 2, 4, 8 s) would put the next try 7 s after it.
const OUTAGE_MS = 9000;

let backend: TestBackend;
let infra: Infrastructure;
let proxy: CuttableProxy;
let workerStore: StoreConnection;
let receiver: Receiver;
let worker: Awaited<ReturnType<typeof startWorkerFromConfig>>;
const logLines: string[] = [];

// The worker reaches the store only through a relay the test cuts; the api side (infra) does not.
before(async () => {
  backend = await createTestBackend(settings);
  const config = loadConfig({ ...backend.env, HOOKLINE_RETRY_SCHEDULE: "1s", HOOKLINE_RETRY_JITTER: "0" });
  const log = createLogger("store-outage-test", (line) => logLines.push(line));
  infra = await openInfrastructure(config, log);
  const through = await startDatabaseProxy(infra.store.pgConfig);
  proxy = through.proxy;
  workerStore = await connectStore(
    { databaseUrl: String(through.config.connectionString) },
    { timeoutMs: 1000, onError: () => {} },
  );
  receiver = await startReceiver((_request, n) => ({ status: n === 1 ? 500 : 200 }));
  worker = await startWorkerFromConfig(config, { ...infra, store: workerStore }, log, { outageWaitMs: 300 });
});

after(async () => {
  await worker?.close();
  await receiver?.close();
  await proxy?.close();
  await workerStore?.close();
  await infra?.close();
  await backend?.dispose();
});

test("a retry that comes due while the worker's store is away goes out soon after the store is back", {
  timeout: 60_000,
}, async () => {
  const db = infra.store.db;
  const now = new Date();
  await createEndpoint(
    db,
    { tenantId: "t", id: "ep", url: receiver.url, description: "", eventTypes: [], secret: generateSecret() },
    now,
  );
  const { deliveries } = await emitEvent(
    db,
    { tenantId: "t", id: "e1", eventType: "x", dataJson: "{}" },
    now,
  );
  const [delivery] = deliveries;
  assert.ok(delivery);
  await infra.producer.enqueue([
    { deliveryId: delivery.id, tenantId: "t", endpointId: "ep", attemptNumber: 1 },
  ]);
  // The first attempt answered 500 and is recorded; its retry is due a second later.
  await eventually(
    () =>
      db.selectFrom("deliveries").select("attempt_count").where("id", "=", delivery.id).executeTakeFirst(),
    (row) => row?.attempt_count === 1,
  );
  proxy.cut();
  await delay(OUTAGE_MS);
  assert.equal(receiver.requests.length, 1, "nothing goes out while the store is away");
  const back = Date.now();
  proxy.restore();
  await eventually(
    async () => receiver.requests.length,
    (count) => count === 2,
    { timeoutMs: 20_000 },
  );
  const late = (receiver.requests[1]?.receivedAt ?? 0) - back;
  assert.ok(late < 3000, `the retry went out ${late} ms after the store came back`);
  assert.ok(
    logLines.some((line) =>
      line.includes("the database is unavailable; a queue whose job found it so waits"),
    ),
    "the worker says why its queues wait",
  );
  assert.ok(
    !logLines.some((line) => line.includes("delivery job failed on our side")),
    "an outage is not a job failure",
  );
});

test("a load that runs out of time fails its job like any other error: a slow store pauses no queue", {
  timeout: 60_000,
}, async () => {
  const db = infra.store.db;
  const from = logLines.length;
  const { deliveries } = await emitEvent(
    db,
    { tenantId: "t", id: "e2", eventType: "x", dataJson: "{}" },
    new Date(),
  );
  const [delivery] = deliveries;
  assert.ok(delivery);
  const sent = receiver.requests.length;
  // Frozen, the relay holds every byte: the worker's load gets no answer within its 1 s timeout.
  proxy.freeze();
  await infra.producer.enqueue([
    { deliveryId: delivery.id, tenantId: "t", endpointId: "ep", attemptNumber: 1 },
  ]);
  const since = () => logLines.slice(from);
  await eventually(
    async () => since(),
    (lines) => lines.some((line) => line.includes("delivery job failed on our side")),
    { timeoutMs: 20_000 },
  );
  proxy.thaw();
  await eventually(
    () => db.selectFrom("deliveries").select("status").where("id", "=", delivery.id).executeTakeFirst(),
    (row) => row?.status === "delivered",
    { timeoutMs: 20_000 },
  );
  assert.equal(receiver.requests.length, sent + 1, "the delivery went out once");
  assert.ok(
    !since().some((line) => line.includes("the database is unavailable; a queue whose job found it")),
    "a timeout is not an outage",
  );
});
