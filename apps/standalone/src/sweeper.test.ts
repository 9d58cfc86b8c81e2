import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { DeliveryStatus } from "@hookline/contracts";
import { openQueueHandle } from "@hookline/queue";
import { emitEvent } from "@hookline/store";
import { type Receiver, readTestSettings, startReceiver } from "@hookline/testkit";
import { finalDeliveries, startTestService, type TestService } from "./test-helpers.js";

const settings = readTestSettings(process.env);

let svc: TestService;
let receiver: Receiver;
before(async () => {
  // The sweep is triggered by hand here; any pending delivery overdue at all counts.
  svc = await startTestService(settings, { HOOKLINE_SWEEP_INTERVAL: "1h", HOOKLINE_SWEEP_GRACE: "0ms" });
  receiver = await startReceiver();
});
after(async () => {
  await receiver.close();
  await svc.close();
});

test("the sweeper re-enqueues a delivery stranded between commit and queue add, exactly once", async () => {
  await svc.endpoints.createEndpoint({ tenantId: "t", id: "ep", url: receiver.url });
  // The store commit without the queue add: what a crash in between leaves behind.
  await emitEvent(
    svc.service.infra.store.db,
    { tenantId: "t", id: "stranded", eventType: "x", dataJson: "{}" },
    new Date(Date.now() - 1000),
  );
  assert.equal(await svc.service.worker.sweep(), 1);
  const [delivery] = await finalDeliveries(svc, "t", "stranded");
  assert.equal(delivery?.status, DeliveryStatus.DELIVERED);
  assert.equal(await svc.service.worker.sweep(), 0, "nothing left to sweep");

  // A normal event afterwards: by the time it arrives, a duplicate of the swept one would have too.
  await svc.emit.emit({ tenantId: "t", eventId: "normal", eventType: "x", dataJson: "{}" });
  await finalDeliveries(svc, "t", "normal");
  assert.deepEqual(
    receiver.requests.map((r) => r.headers["webhook-id"]),
    ["stranded", "normal"],
  );
});

test("a delivery already waiting on its queue is left alone", async () => {
  const slow = await startReceiver(() => "hang");
  try {
    await svc.endpoints.createEndpoint({ tenantId: "busy", id: "ep", url: slow.url });
    for (const n of [1, 2, 3])
      await svc.emit.emit({ tenantId: "busy", eventId: `e${n}`, eventType: "x", dataJson: "{}" });
    await slow.waitForRequests(2); // the cap of 2 is in flight; e3 waits on the queue
    assert.equal(await svc.service.worker.sweep(), 0);
  } finally {
    await slow.close();
  }
});

test("a delivery waiting on a queue left paused is resumed by the sweep", async () => {
  const r = await startReceiver();
  const ref = { tenantId: "paused", endpointId: "ep" };
  // What a removal cut short by Redis leaves, should CreateEndpoint fail to resume it as well.
  const { infra } = svc.service;
  const queue = openQueueHandle(infra.queueBackend, infra.producer.routing.queueOf(ref));
  try {
    await svc.endpoints.createEndpoint({ tenantId: ref.tenantId, id: ref.endpointId, url: r.url });
    await queue.pause();
    await svc.emit.emit({ tenantId: ref.tenantId, eventId: "held", eventType: "x", dataJson: "{}" });
    assert.equal(await svc.service.worker.sweep(), 0, "its job is there: nothing to put back");
    const [request] = await r.waitForRequests(1);
    assert.equal(request?.headers["webhook-id"], "held");
  } finally {
    await queue.close();
    await r.close();
  }
});
