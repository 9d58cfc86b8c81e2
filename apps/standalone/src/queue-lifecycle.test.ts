import assert from "node:assert/strict";
import { test } from "node:test";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { loadConfig } from "@hookline/config";
import { AttemptLogService, DeliveryStatus, EmitService, EndpointService } from "@hookline/contracts";
import { openQueueHandle, rateWindow } from "@hookline/queue";
import { createLogger } from "@hookline/runtime";
import { createTestBackend, eventually, readTestSettings, startReceiver } from "@hookline/testkit";
import { startService } from "./service.js";
import { sharedTestService, startTestService } from "./test-helpers.js";

const settings = readTestSettings(process.env);
const QUEUE_SETTINGS = {
  HOOKLINE_QUEUE_IDLE: "200ms",
  HOOKLINE_DELIVERY_TIMEOUT_MS: "1000",
  HOOKLINE_RETRY_SCHEDULE: "1h",
  // A fixed cap, so a hanging endpoint holds a known number of attempts (adaptive has its own tests).
  HOOKLINE_ENDPOINT_CONCURRENCY: "2",
};
const shared = sharedTestService(settings, QUEUE_SETTINGS);

test("an idle service holds no queue open, however many endpoints are registered", async () => {
  const receiver = await shared.receiver();
  for (let n = 0; n < 50; n++)
    await shared.svc.endpoints.createEndpoint({ tenantId: "idle", id: `ep${n}`, url: receiver.url });
  await shared.svc.service.worker.discover();
  assert.equal(shared.svc.service.worker.openQueues, 0, "50 endpoints without work: no queue open");

  await shared.svc.emit.emit({ tenantId: "idle", eventId: "one", eventType: "x", dataJson: "{}" });
  await receiver.waitForRequests(50);
  // Each queue closes once idle: the cost follows the work, not the endpoint count.
  await eventually(
    async () => shared.svc.service.worker.openQueues,
    (open) => open === 0,
  );
});

test("deleting an endpoint cancels its pending deliveries and releases its queue", async () => {
  // A service of its own, since it counts open queues: a scan that read another test's deliveries
  // while they were pending can open their queues again, for a moment, after they closed.
  const svc = await startTestService(settings, QUEUE_SETTINGS);
  const hanging = await startReceiver(() => "hang");
  try {
    await svc.endpoints.createEndpoint({ tenantId: "del", id: "ep", url: hanging.url });
    for (let n = 0; n < 5; n++)
      await svc.emit.emit({ tenantId: "del", eventId: `e${n}`, eventType: "x", dataJson: "{}" });
    await hanging.waitForRequests(2); // its cap is in flight; three wait on its queue
    assert.equal(svc.service.worker.openQueues, 1);

    await svc.endpoints.deleteEndpoint({ tenantId: "del", id: "ep" });
    const { deliveries } = await eventually(
      () => svc.log.listDeliveries({ tenantId: "del", pageSize: 10 }),
      (r) => r.deliveries.every((d) => d.status === DeliveryStatus.CANCELLED),
    );
    assert.equal(deliveries.length, 5);
    // The two under way keep their jobs until they end (their attempts time out and are logged).
    await eventually(
      () => svc.log.listAttempts({ tenantId: "del" }),
      (r) => r.attempts.length === 2,
    );
    // No job is left in the queue. An attempt is recorded while its job completes (the writes
    // after an answer do not wait for BullMQ), so its job may still be live when the row is read.
    const { producer } = svc.service.infra;
    await eventually(
      () =>
        Promise.all(
          deliveries.map((d) => producer.hasLiveJob({ tenantId: "del", endpointId: "ep" }, d.id, 1)),
        ),
      (live) => live.every((isLive) => !isLive),
    );
    await eventually(
      async () => svc.service.worker.openQueues,
      (open) => open === 0,
    );
    assert.equal(hanging.requests.length, 2, "the waiting deliveries were never sent");
  } finally {
    await hanging.close();
    await svc.close();
  }
});

test("deleting an endpoint during an attempt logs no error, and a new endpoint with its id is served", async () => {
  // Locks renewed every second; the attempt outlasts two renewals before it times out.
  const svc = await startTestService(settings, {
    HOOKLINE_STALLED_AFTER: "2s",
    HOOKLINE_DELIVERY_TIMEOUT_MS: "2500",
    HOOKLINE_RETRY_SCHEDULE: "1h",
  });
  const hanging = await startReceiver(() => "hang");
  const healthy = await startReceiver();
  try {
    await svc.endpoints.createEndpoint({ tenantId: "t", id: "ep", url: hanging.url });
    await svc.emit.emit({ tenantId: "t", eventId: "under-way", eventType: "x", dataJson: "{}" });
    await hanging.waitForRequests(1);
    await svc.endpoints.deleteEndpoint({ tenantId: "t", id: "ep" });
    const { attempts } = await eventually(
      () => svc.log.listAttempts({ tenantId: "t", eventId: "under-way" }),
      (r) => r.attempts.length === 1,
    );
    assert.equal(attempts[0]?.deliveryStatus, DeliveryStatus.CANCELLED);
    const errors = svc.logLines.filter((line) => JSON.parse(line).level === "error");
    assert.deepEqual(errors, [], "the job under way kept its queue to the end");

    await svc.endpoints.createEndpoint({ tenantId: "t", id: "ep", url: healthy.url });
    await svc.emit.emit({ tenantId: "t", eventId: "after", eventType: "x", dataJson: "{}" });
    const [request] = await healthy.waitForRequests(1);
    assert.equal(request?.headers["webhook-id"], "after");
  } finally {
    await Promise.all([hanging.close(), healthy.close()]);
    await svc.close();
  }
});

test("a new endpoint is served under a deleted one's id whose queue a failed removal left paused", async () => {
  const receiver = await shared.receiver();
  const ref = { tenantId: "paused", endpointId: "ep" };
  await shared.svc.endpoints.createEndpoint({
    tenantId: ref.tenantId,
    id: ref.endpointId,
    url: receiver.url,
  });
  await shared.svc.endpoints.deleteEndpoint({ tenantId: ref.tenantId, id: ref.endpointId });
  // What a removal leaves when Redis goes away between obliterate's pause and the resume after it.
  const { infra } = shared.svc.service;
  const queue = openQueueHandle(infra.queueBackend, infra.producer.routing.queueOf(ref));
  try {
    await queue.pause();
    await shared.svc.endpoints.createEndpoint({
      tenantId: ref.tenantId,
      id: ref.endpointId,
      url: receiver.url,
    });
    await shared.svc.emit.emit({ tenantId: ref.tenantId, eventId: "reused", eventType: "x", dataJson: "{}" });
    const [request] = await receiver.waitForRequests(1);
    assert.equal(request?.headers["webhook-id"], "reused");
  } finally {
    await queue.close();
  }
});

test("a new endpoint under a deleted one's id has its own limits in its queue at once: the removal took the old ones", async () => {
  const receiver = await shared.receiver();
  const ref = { tenantId: "limits-again", endpointId: "ep" };
  const { infra } = shared.svc.service;
  const queue = openQueueHandle(infra.queueBackend, infra.producer.routing.queueOf(ref));
  try {
    const create = (maxInFlight: number, rateLimitPerSecond: number) =>
      shared.svc.endpoints.createEndpoint({
        ...ref,
        id: ref.endpointId,
        url: receiver.url,
        maxInFlight,
        rateLimitPerSecond,
      });
    await create(3, 5);
    await shared.svc.endpoints.deleteEndpoint({ tenantId: ref.tenantId, id: ref.endpointId });
    await create(2, 20);
    // Read before any worker opens the queue (nothing was emitted): the api wrote them.
    assert.equal(await queue.getGlobalConcurrency(), 2);
    const [max, duration] = rateWindow(20);
    assert.deepEqual(await queue.getGlobalRateLimit(), { max, duration });
  } finally {
    await queue.close();
  }
});

test("switching between per-endpoint queues and lanes on a live system loses nothing", async () => {
  const backend = await createTestBackend(settings);
  let failing = true;
  const receiver = await startReceiver(() => ({ status: failing ? 503 : 200 }));
  const start = (lanes: string) =>
    startService(
      loadConfig({
        ...backend.env,
        HOOKLINE_API_ADDR: "127.0.0.1:0",
        HOOKLINE_QUEUE_POLL_INTERVAL: "20ms",
        HOOKLINE_LANES: lanes,
        HOOKLINE_RETRY_SCHEDULE: "200ms,200ms,200ms,200ms,200ms,200ms,200ms,200ms,200ms,1h",
        HOOKLINE_RETRY_JITTER: "0",
        // The sweeper moves what the old layout's queues hold into the new layout's.
        HOOKLINE_SWEEP_INTERVAL: "200ms",
        HOOKLINE_SWEEP_GRACE: "100ms",
      }),
      createLogger("test", () => {}),
    );
  const clients = (address: string) => {
    const transport = createGrpcTransport({ baseUrl: `http://${address}` });
    return {
      endpoints: createClient(EndpointService, transport),
      emit: createClient(EmitService, transport),
      log: createClient(AttemptLogService, transport),
    };
  };
  const emitFailing = async (rpc: ReturnType<typeof clients>, ids: string[]) => {
    failing = true;
    for (const id of ids) await rpc.emit.emit({ tenantId: "t", eventId: id, eventType: "x", dataJson: "{}" });
    await eventually(
      () => rpc.log.listDeliveries({ tenantId: "t", status: DeliveryStatus.PENDING, pageSize: 100 }),
      (r) => ids.every((id) => r.deliveries.some((d) => d.eventId === id && d.attemptCount >= 1)),
    );
  };
  const allDelivered = (rpc: ReturnType<typeof clients>, count: number) =>
    eventually(
      () => rpc.log.listDeliveries({ tenantId: "t", pageSize: 100 }),
      (r) =>
        r.deliveries.length === count && r.deliveries.every((d) => d.status === DeliveryStatus.DELIVERED),
      { timeoutMs: 30_000 },
    );
  try {
    // Lanes, then per-endpoint queues: the pending deliveries' jobs sit in lane queues nobody serves now.
    let svc = await start("2");
    let rpc = clients(svc.address);
    for (const id of ["a", "b"]) await rpc.endpoints.createEndpoint({ tenantId: "t", id, url: receiver.url });
    await emitFailing(rpc, ["e1", "e2", "e3"]);
    await svc.close();
    svc = await start("0");
    rpc = clients(svc.address);
    failing = false;
    await allDelivered(rpc, 6);
    // And back: per-endpoint queues' jobs left behind when lanes come back.
    await emitFailing(rpc, ["e4", "e5"]);
    await svc.close();
    svc = await start("2");
    rpc = clients(svc.address);
    failing = false;
    await allDelivered(rpc, 10);
    await svc.close();
    const delivered = receiver.requests.filter((_, i) => i >= 0).map((r) => r.headers["webhook-id"]);
    assert.deepEqual([...new Set(delivered)].sort(), ["e1", "e2", "e3", "e4", "e5"]);
  } finally {
    await receiver.close();
    await backend.dispose();
  }
});
