import assert from "node:assert/strict";
import { test } from "node:test";
import { create } from "@bufbuild/protobuf";
import { DurationSchema, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { AttemptTrigger, DeliveryStatus, EndpointStatus } from "@hookline/contracts";
import { reopenDelivery } from "@hookline/store";
import { readTestSettings, startReceiver } from "@hookline/testkit";
import { sql } from "kysely";
import { attemptsOf, finalDeliveries, sharedTestService, startTestService } from "./test-helpers.js";

const settings = readTestSettings(process.env);

const shared = sharedTestService(settings, {
  HOOKLINE_RETRY_SCHEDULE: "20ms",
  HOOKLINE_DELIVERY_TIMEOUT_MS: "300",
});
const { receiver } = shared;

test("after a rotation, requests verify with the old secret and with the new one until the grace ends", async () => {
  const r = await receiver();
  const { endpoint: created } = await shared.svc.endpoints.createEndpoint({
    tenantId: "rot",
    id: "ep",
    url: r.url,
  });
  const oldSecret = created?.secret ?? "";
  const { endpoint: rotated } = await shared.svc.endpoints.rotateEndpointSecret({
    tenantId: "rot",
    id: "ep",
  });
  const newSecret = rotated?.secret ?? "";
  assert.notEqual(newSecret, oldSecret);
  await shared.svc.emit.emit({ tenantId: "rot", eventId: "during", eventType: "x", dataJson: "{}" });
  await finalDeliveries(shared.svc, "rot", "during");
  assert.equal(r.requests.length, 1);
  assert.ok(r.verifyAll([oldSecret]), "a receiver holding only the old secret verifies");
  assert.ok(r.verifyAll([newSecret]), "a receiver holding only the new secret verifies");
  assert.equal(String(r.requests[0]?.headers["webhook-signature"]).split(" ").length, 2);

  // Rotating again with no grace retires every earlier secret at once.
  const { endpoint: again } = await shared.svc.endpoints.rotateEndpointSecret({
    tenantId: "rot",
    id: "ep",
    gracePeriod: create(DurationSchema, { seconds: 0n }),
  });
  await shared.svc.emit.emit({ tenantId: "rot", eventId: "after", eventType: "x", dataJson: "{}" });
  await finalDeliveries(shared.svc, "rot", "after");
  const last = await receiver();
  last.requests.push(...r.requests.slice(1));
  assert.ok(last.verifyAll([again?.secret ?? ""]));
  assert.ok(
    !last.verifyAll([oldSecret]) && !last.verifyAll([newSecret]),
    "the retired secrets no longer sign",
  );
  const { endpoints } = await shared.svc.endpoints.listEndpoints({ tenantId: "rot" });
  assert.equal(endpoints[0]?.secret, "", "lists never carry secrets");
});

test("rotations in a row keep the four most recently retired secrets signing, not more", async () => {
  const r = await receiver();
  const { endpoint } = await shared.svc.endpoints.createEndpoint({ tenantId: "rot6", id: "ep", url: r.url });
  const secrets = [endpoint?.secret ?? ""];
  for (let n = 0; n < 6; n++) {
    const { endpoint: rotated } = await shared.svc.endpoints.rotateEndpointSecret({
      tenantId: "rot6",
      id: "ep",
    });
    secrets.push(rotated?.secret ?? "");
  }
  await shared.svc.emit.emit({ tenantId: "rot6", eventId: "e", eventType: "x", dataJson: "{}" });
  await finalDeliveries(shared.svc, "rot6", "e");
  assert.equal(String(r.requests[0]?.headers["webhook-signature"]).split(" ").length, 5);
  const signing = secrets.map((secret) => r.verifyAll([secret]));
  assert.deepEqual(signing, [false, false, true, true, true, true, true], "the two retired longest stopped");

  // An endpoint rotated more often before the bound came in signs with no more either.
  const until = new Date(Date.now() + 3_600_000).toISOString();
  const older = secrets.slice(0, 6).map((secret) => ({ secret, expires_at: until }));
  await sql`update hookline.endpoints set previous_secrets = ${JSON.stringify(older)}::jsonb
             where tenant_id = 'rot6' and id = 'ep'`.execute(shared.svc.service.infra.store.db);
  await shared.svc.emit.emit({ tenantId: "rot6", eventId: "e2", eventType: "x", dataJson: "{}" });
  await finalDeliveries(shared.svc, "rot6", "e2");
  assert.equal(String(r.requests[1]?.headers["webhook-signature"]).split(" ").length, 5);
});

test("RetryDelivery makes one manual attempt for a failed delivery", async () => {
  let healthy = false;
  const r = await receiver(() => ({ status: healthy ? 200 : 500 }));
  await shared.svc.endpoints.createEndpoint({ tenantId: "retry", id: "ep", url: r.url });
  const { deliveryIds } = await shared.svc.emit.emit({
    tenantId: "retry",
    eventId: "e",
    eventType: "x",
    dataJson: "{}",
  });
  const [failed] = await finalDeliveries(shared.svc, "retry", "e");
  assert.equal(failed?.status, DeliveryStatus.FAILED);
  healthy = true;
  const { delivery } = await shared.svc.log.retryDelivery({
    tenantId: "retry",
    deliveryId: deliveryIds[0] ?? "",
  });
  assert.equal(delivery?.status, DeliveryStatus.PENDING);
  const [done] = await finalDeliveries(shared.svc, "retry", "e");
  assert.equal(done?.status, DeliveryStatus.DELIVERED);
  const attempts = await attemptsOf(shared.svc, "retry", "e");
  assert.deepEqual(
    attempts.map((a) => [a.attemptNumber, a.responseStatus, a.trigger]),
    [
      [1, 500, AttemptTrigger.SCHEDULED],
      [2, 500, AttemptTrigger.SCHEDULED],
      [3, 200, AttemptTrigger.MANUAL],
    ],
  );
  // A resend of a delivered delivery is allowed too; a pending one is refused.
  await shared.svc.log.retryDelivery({ tenantId: "retry", deliveryId: deliveryIds[0] ?? "" });
  await r.waitForRequests(4);
  const pending = await shared.svc.emit.emit({
    tenantId: "retry",
    eventId: "slow",
    eventType: "x",
    dataJson: "{}",
  });
  healthy = false;
  await shared.svc.log
    .retryDelivery({ tenantId: "retry", deliveryId: pending.deliveryIds[0] ?? "" })
    .catch((error: unknown) => assert.equal(ConnectError.from(error).code, Code.FailedPrecondition));
  await assert.rejects(
    shared.svc.log.retryDelivery({ tenantId: "retry", deliveryId: "dl_nope" }),
    /not found/,
  );
});

test("a new endpoint that takes a deleted endpoint's id is sent none of the deleted one's deliveries", async () => {
  const svc = await startTestService(settings, {
    HOOKLINE_RETRY_SCHEDULE: "20ms",
    HOOKLINE_SWEEP_INTERVAL: "1h",
    HOOKLINE_SWEEP_GRACE: "0ms",
  });
  const gone = await startReceiver(() => ({ status: 503 }));
  const fresh = await startReceiver();
  try {
    await svc.endpoints.createEndpoint({ tenantId: "reuse", id: "ep", url: gone.url });
    const { deliveryIds } = await svc.emit.emit({
      tenantId: "reuse",
      eventId: "old",
      eventType: "x",
      dataJson: "{}",
    });
    const oldId = deliveryIds[0] ?? "";
    assert.equal((await finalDeliveries(svc, "reuse", "old"))[0]?.status, DeliveryStatus.FAILED);
    await svc.endpoints.deleteEndpoint({ tenantId: "reuse", id: "ep" });
    await svc.endpoints.createEndpoint({ tenantId: "reuse", id: "ep", url: fresh.url });

    const since = timestampFromDate(new Date(Date.now() - 3_600_000));
    assert.equal((await svc.endpoints.recoverEndpoint({ tenantId: "reuse", id: "ep", since })).requeued, 0);
    const refused = await svc.log.retryDelivery({ tenantId: "reuse", deliveryId: oldId }).then(
      () => "retried",
      (error: unknown) => ConnectError.from(error),
    );
    assert.ok(refused instanceof ConnectError && refused.code === Code.FailedPrecondition, String(refused));
    assert.match(refused.rawMessage, /endpoint "ep", which was deleted/);
    // Enabling the new endpoint would not help: the refusal must not tell the caller to do it.
    await svc.endpoints.updateEndpoint({ tenantId: "reuse", id: "ep", status: EndpointStatus.DISABLED });
    const whileDisabled = await svc.log
      .retryDelivery({ tenantId: "reuse", deliveryId: oldId })
      .catch((error: unknown) => ConnectError.from(error));
    assert.match(String(whileDisabled), /endpoint "ep", which was deleted/);
    await svc.endpoints.updateEndpoint({ tenantId: "reuse", id: "ep", status: EndpointStatus.ENABLED });

    // A job of the old endpoint that was still on its way when the id was taken again: what the
    // worker finds is a delivery whose endpoint is gone, and it cancels it without a request.
    await svc.service.infra.store.db
      .updateTable("deliveries")
      .set({ status: "pending", next_attempt_at: new Date(Date.now() - 1000) })
      .where("id", "=", oldId)
      .execute();
    assert.equal(await svc.service.worker.sweep(), 1);
    assert.equal((await finalDeliveries(svc, "reuse", "old"))[0]?.status, DeliveryStatus.CANCELLED);

    await svc.emit.emit({ tenantId: "reuse", eventId: "new", eventType: "x", dataJson: "{}" });
    assert.equal((await finalDeliveries(svc, "reuse", "new"))[0]?.status, DeliveryStatus.DELIVERED);
    assert.deepEqual(
      fresh.requests.map((request) => request.headers["webhook-id"]),
      ["new"],
    );
  } finally {
    await gone.close();
    await fresh.close();
    await svc.close();
  }
});

test("a disabled endpoint's deliveries are not retried or recovered until it is enabled again", async () => {
  let gone = true;
  const r = await receiver(() => ({ status: gone ? 410 : 200 }));
  await shared.svc.endpoints.createEndpoint({ tenantId: "off", id: "ep", url: r.url });
  const { deliveryIds } = await shared.svc.emit.emit({
    tenantId: "off",
    eventId: "e",
    eventType: "x",
    dataJson: "{}",
  });
  const deliveryId = deliveryIds[0] ?? "";
  assert.equal((await finalDeliveries(shared.svc, "off", "e"))[0]?.status, DeliveryStatus.CANCELLED);
  const refusal = (call: Promise<unknown>) =>
    call.then(
      () => "answered",
      (error: unknown) => ConnectError.from(error),
    );
  const since = timestampFromDate(new Date(Date.now() - 3_600_000));
  for (const call of [
    () => shared.svc.log.retryDelivery({ tenantId: "off", deliveryId }),
    () => shared.svc.endpoints.recoverEndpoint({ tenantId: "off", id: "ep", since }),
  ]) {
    const refused = await refusal(call());
    assert.ok(refused instanceof ConnectError && refused.code === Code.FailedPrecondition, String(refused));
    assert.match(refused.rawMessage, /endpoint "ep" is disabled: enable it/);
  }
  assert.equal((await finalDeliveries(shared.svc, "off", "e"))[0]?.status, DeliveryStatus.CANCELLED);

  gone = false;
  await shared.svc.endpoints.updateEndpoint({ tenantId: "off", id: "ep", status: EndpointStatus.ENABLED });
  await shared.svc.log.retryDelivery({ tenantId: "off", deliveryId });
  await r.waitForRequests(2);
  assert.equal((await finalDeliveries(shared.svc, "off", "e"))[0]?.status, DeliveryStatus.DELIVERED);
});

test("a RetryDelivery whose job was lost is still one manual attempt when the sweeper puts it back", async () => {
  // A schedule with a wait left after the second attempt, which a scheduled attempt would start.
  const svc = await startTestService(settings, {
    HOOKLINE_RETRY_SCHEDULE: "20ms,1h",
    HOOKLINE_SWEEP_INTERVAL: "1h",
    HOOKLINE_SWEEP_GRACE: "0ms",
  });
  const r = await startReceiver((_request, n) => ({ status: n === 1 ? 200 : 503 }));
  try {
    await svc.endpoints.createEndpoint({ tenantId: "lost", id: "ep", url: r.url });
    const { deliveryIds } = await svc.emit.emit({
      tenantId: "lost",
      eventId: "e",
      eventType: "x",
      dataJson: "{}",
    });
    const [delivered] = await finalDeliveries(svc, "lost", "e");
    assert.equal(delivered?.status, DeliveryStatus.DELIVERED);
    // What RetryDelivery commits before it queues the attempt; the api dies before the add. A
    // second ago, so the sweep (grace 0) finds it due however fast it runs.
    await reopenDelivery(
      svc.service.infra.store.db,
      "lost",
      deliveryIds[0] ?? "",
      new Date(Date.now() - 1000),
    );
    assert.equal(await svc.service.worker.sweep(), 1);
    const [resent] = await finalDeliveries(svc, "lost", "e");
    assert.equal(resent?.status, DeliveryStatus.FAILED, "failed, not pending on a new schedule");
    assert.deepEqual(
      (await attemptsOf(svc, "lost", "e")).map((a) => [a.attemptNumber, a.responseStatus, a.trigger]),
      [
        [1, 200, AttemptTrigger.SCHEDULED],
        [2, 503, AttemptTrigger.MANUAL],
      ],
    );
  } finally {
    await r.close();
    await svc.close();
  }
});

test("RecoverEndpoint requeues the endpoint's failed deliveries since a time, once", async () => {
  let healthy = false;
  const r = await receiver(() => ({ status: healthy ? 200 : 503 }));
  await shared.svc.endpoints.createEndpoint({ tenantId: "recover", id: "ep", url: r.url });
  for (const n of [1, 2, 3])
    await shared.svc.emit.emit({ tenantId: "recover", eventId: `e${n}`, eventType: "x", dataJson: "{}" });
  for (const n of [1, 2, 3]) await finalDeliveries(shared.svc, "recover", `e${n}`);
  healthy = true;
  const since = timestampFromDate(new Date(Date.now() - 3_600_000));
  const { requeued } = await shared.svc.endpoints.recoverEndpoint({ tenantId: "recover", id: "ep", since });
  assert.equal(requeued, 3);
  for (const n of [1, 2, 3]) {
    const [d] = await finalDeliveries(shared.svc, "recover", `e${n}`);
    assert.equal(d?.status, DeliveryStatus.DELIVERED);
  }
  const again = await shared.svc.endpoints.recoverEndpoint({ tenantId: "recover", id: "ep", since });
  assert.equal(again.requeued, 0, "nothing failed is left");
  await assert.rejects(
    shared.svc.endpoints.recoverEndpoint({
      tenantId: "recover",
      id: "ep",
      since: timestampFromDate(new Date(Date.now() - 15 * 86_400_000)),
    }),
    /since must be within the last 14 days/,
  );
  // The longest window, reckoned on the caller's clock before the call travels: still within it.
  const fortnight = timestampFromDate(new Date(Date.now() - 14 * 86_400_000));
  await shared.svc.endpoints.recoverEndpoint({ tenantId: "recover", id: "ep", since: fortnight });
});
