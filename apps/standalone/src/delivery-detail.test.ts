import assert from "node:assert/strict";
import { test } from "node:test";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { AttemptTrigger, DeliveryStatus } from "@hookline/contracts";
import { readTestSettings } from "@hookline/testkit";
import { finalDeliveries, sharedTestService } from "./test-helpers.js";

const shared = sharedTestService(readTestSettings(process.env), {
  HOOKLINE_ALLOWED_CIDRS: "127.0.0.0/8",
  HOOKLINE_RETRY_SCHEDULE: "50ms",
  HOOKLINE_RETRY_JITTER: "0",
});

test("DescribeDelivery shows the body and the headers each attempt sent, signatures but never the secret", async () => {
  const { svc } = shared;
  const receiver = await shared.receiver((_r, n) => (n === 1 ? { status: 503 } : { status: 200 }));
  const { endpoint } = await svc.endpoints.createEndpoint({ tenantId: "acme", url: receiver.url });
  assert.ok(endpoint);
  const { deliveryIds } = await svc.emit.emit({
    tenantId: "acme",
    eventId: "inv_1",
    eventType: "invoice.paid",
    dataJson: '{"amount":4200}',
  });
  await finalDeliveries(svc, "acme", "inv_1");
  const detail = await svc.log.describeDelivery({ tenantId: "acme", deliveryId: deliveryIds[0] ?? "" });

  assert.equal(detail.delivery?.status, DeliveryStatus.DELIVERED);
  assert.equal(detail.eventType, "invoice.paid");
  assert.equal(detail.body, receiver.requests[0]?.body, "the body is the bytes sent");
  assert.deepEqual(
    detail.requests.map((r) => r.attempt?.responseStatus),
    [503, 200],
  );
  for (const [i, request] of detail.requests.entries()) {
    const sent = receiver.requests[i]?.headers ?? {};
    const shown = Object.fromEntries(request.headers.map((h) => [h.name, h.value]));
    assert.equal(request.url, receiver.url);
    assert.equal(shown["webhook-id"], sent["webhook-id"]);
    assert.equal(shown["webhook-timestamp"], sent["webhook-timestamp"]);
    assert.equal(shown["webhook-signature"], sent["webhook-signature"]);
  }
  const secretKey = endpoint.secret.slice("whsec_".length);
  assert.ok(!JSON.stringify(detail, (_k, v) => (typeof v === "bigint" ? String(v) : v)).includes(secretKey));

  // The receiver moved: a resend goes to the new URL, and the earlier attempts still show theirs.
  const moved = await shared.receiver();
  await svc.endpoints.updateEndpoint({ tenantId: "acme", id: endpoint.id, url: moved.url });
  await svc.log.retryDelivery({ tenantId: "acme", deliveryId: deliveryIds[0] ?? "" });
  await moved.waitForRequests(1);
  await finalDeliveries(svc, "acme", "inv_1");
  const again = await svc.log.describeDelivery({ tenantId: "acme", deliveryId: deliveryIds[0] ?? "" });
  assert.equal(again.requests.at(-1)?.attempt?.trigger, AttemptTrigger.MANUAL);
  assert.deepEqual(
    again.requests.map((r) => [r.url, r.attempt?.url]),
    [
      [receiver.url, receiver.url],
      [receiver.url, receiver.url],
      [moved.url, moved.url],
    ],
  );

  const missing = await svc.log
    .describeDelivery({ tenantId: "globex", deliveryId: deliveryIds[0] ?? "" })
    .catch((error: unknown) => ConnectError.from(error));
  assert.ok(missing instanceof ConnectError && missing.code === Code.NotFound);
});

test("after a rotation DescribeDelivery still shows the signature each attempt sent, never one it did not", async () => {
  const { svc } = shared;
  const receiver = await shared.receiver();
  await svc.endpoints.createEndpoint({ tenantId: "rot", id: "ep", url: receiver.url });
  const { deliveryIds } = await svc.emit.emit({
    tenantId: "rot",
    eventId: "e",
    eventType: "x",
    dataJson: "{}",
  });
  await finalDeliveries(svc, "rot", "e");
  const sent = receiver.requests[0]?.headers["webhook-signature"];
  assert.ok(sent);
  const shownSignature = async () => {
    const detail = await svc.log.describeDelivery({ tenantId: "rot", deliveryId: deliveryIds[0] ?? "" });
    const [request] = detail.requests;
    const shown = Object.fromEntries((request?.headers ?? []).map((h) => [h.name, h.value]));
    assert.equal(shown["webhook-id"], "e", "the other headers are shown whatever happened to the secret");
    return shown["webhook-signature"];
  };
  // Within the old secret's grace, and after it was retired at once.
  await svc.endpoints.rotateEndpointSecret({ tenantId: "rot", id: "ep" });
  assert.equal(await shownSignature(), sent);
  await svc.endpoints.rotateEndpointSecret({ tenantId: "rot", id: "ep", gracePeriod: { seconds: 0n } });
  assert.equal(await shownSignature(), undefined, "the secret that signed is gone: no signature is made up");
});

test("ListDeliveries filters by event type and creation time", async () => {
  const { svc } = shared;
  const receiver = await shared.receiver();
  await svc.endpoints.createEndpoint({ tenantId: "filters", id: "ep", url: receiver.url });
  const before = new Date();
  await svc.emit.emit({ tenantId: "filters", eventId: "a", eventType: "order.created", dataJson: "{}" });
  await svc.emit.emit({ tenantId: "filters", eventId: "b", eventType: "order.shipped", dataJson: "{}" });
  const ids = async (request: Parameters<typeof svc.log.listDeliveries>[0]) =>
    (await svc.log.listDeliveries({ tenantId: "filters", ...request })).deliveries.map((d) => d.eventId);

  assert.deepEqual(await ids({ eventType: "order.shipped" }), ["b"]);
  assert.deepEqual(await ids({ createdFrom: timestampFromDate(new Date(before.getTime() - 60_000)) }), [
    "a",
    "b",
  ]);
  assert.deepEqual(await ids({ createdUntil: timestampFromDate(new Date(before.getTime() - 60_000)) }), []);
  assert.deepEqual(await ids({ createdFrom: timestampFromDate(new Date(Date.now() + 60_000)) }), []);
  // A nanosecond after a's creation: a was created before it, whatever the store's precision.
  const a = (await svc.log.listDeliveries({ tenantId: "filters", eventId: "a" })).deliveries[0]?.createdAt;
  assert.ok(a);
  const justAfterA = { ...a, nanos: a.nanos + 1 };
  assert.ok(!(await ids({ createdFrom: justAfterA })).includes("a"), "created before created_from");
  assert.ok((await ids({ createdUntil: justAfterA })).includes("a"), "created before created_until");
  const bad = await svc.log
    .listDeliveries({ tenantId: "filters", eventType: "bad type!" })
    .catch((error: unknown) => ConnectError.from(error));
  assert.ok(
    bad instanceof ConnectError && bad.code === Code.InvalidArgument && /event_type/.test(bad.rawMessage),
  );
});
