import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";
import { DeliveryStatus, EndpointStatus } from "@hookline/contracts";
import { readTestSettings } from "@hookline/testkit";
import { attemptsOf, finalDeliveries, sharedTestService } from "./test-helpers.js";

const settings = readTestSettings(process.env);

// Scaled-down schedule: 4 attempts, 50/100/200 ms apart, 300 ms timeout.
const shared = sharedTestService(settings, {
  HOOKLINE_RETRY_SCHEDULE: "50ms,100ms,200ms",
  HOOKLINE_DELIVERY_TIMEOUT_MS: "300",
});

const { receiver } = shared;

test("an endpoint that never answers times out on every attempt, then the delivery fails", async () => {
  const r = await receiver(() => "hang");
  await shared.svc.endpoints.createEndpoint({ tenantId: "timeout", id: "slow", url: r.url });
  await shared.svc.emit.emit({ tenantId: "timeout", eventId: "e", eventType: "x", dataJson: "{}" });
  const [delivery] = await finalDeliveries(shared.svc, "timeout", "e");
  assert.equal(delivery?.status, DeliveryStatus.FAILED);
  const attempts = await attemptsOf(shared.svc, "timeout", "e");
  assert.deepEqual(
    attempts.map((a) => [a.attemptNumber, a.responseStatus, a.error]),
    [1, 2, 3, 4].map((n) => [n, 0, "no response within 300 ms"]),
  );
  assert.ok(attempts.every((a) => a.durationMs >= 300 && a.durationMs < 2000));
  assert.deepEqual(
    attempts.map((a) => a.deliveryStatus),
    [DeliveryStatus.PENDING, DeliveryStatus.PENDING, DeliveryStatus.PENDING, DeliveryStatus.FAILED],
  );
  assert.equal(r.requests.length, 4);
});

test("a 410 disables the endpoint, cancels the delivery and is not retried", async () => {
  const r = await receiver(() => ({ status: 410, body: "gone for good" }));
  await shared.svc.endpoints.createEndpoint({ tenantId: "gone", id: "old", url: r.url });
  await shared.svc.emit.emit({ tenantId: "gone", eventId: "e", eventType: "x", dataJson: "{}" });
  const [delivery] = await finalDeliveries(shared.svc, "gone", "e");
  assert.equal(delivery?.status, DeliveryStatus.CANCELLED);
  const attempts = await attemptsOf(shared.svc, "gone", "e");
  assert.deepEqual(
    attempts.map((a) => [a.responseStatus, a.responseBody, a.deliveryStatus]),
    [[410, "gone for good", DeliveryStatus.CANCELLED]],
  );
  const { endpoint } = await shared.svc.endpoints.getEndpoint({ tenantId: "gone", id: "old" });
  assert.equal(endpoint?.status, EndpointStatus.DISABLED);
  assert.match(endpoint?.disabledReason ?? "", /410/);
  // A disabled endpoint gets no new deliveries.
  const next = await shared.svc.emit.emit({
    tenantId: "gone",
    eventId: "e2",
    eventType: "x",
    dataJson: "{}",
  });
  assert.deepEqual(next.deliveryIds, []);
  assert.equal(r.requests.length, 1);
});

test("a redirect is not followed: a 3xx is a failed attempt and the target sees nothing", async () => {
  const target = await receiver();
  const r = await receiver(() => ({ status: 302, headers: { location: target.url } }));
  await shared.svc.endpoints.createEndpoint({ tenantId: "redirect", id: "moved", url: r.url });
  await shared.svc.emit.emit({ tenantId: "redirect", eventId: "e", eventType: "x", dataJson: "{}" });
  const [delivery] = await finalDeliveries(shared.svc, "redirect", "e");
  assert.equal(delivery?.status, DeliveryStatus.FAILED);
  const attempts = await attemptsOf(shared.svc, "redirect", "e");
  assert.deepEqual(
    attempts.map((a) => a.responseStatus),
    [302, 302, 302, 302],
  );
  assert.equal(target.requests.length, 0);
});

test("a 200 that streams its body forever is delivered within the timeout, body capped", async () => {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/plain" });
    const timer = setInterval(() => res.write("x".repeat(1024)), 5);
    res.on("close", () => clearInterval(timer));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    await shared.svc.endpoints.createEndpoint({ tenantId: "endless", id: "firehose", url });
    await shared.svc.emit.emit({ tenantId: "endless", eventId: "e", eventType: "x", dataJson: "{}" });
    const [delivery] = await finalDeliveries(shared.svc, "endless", "e");
    assert.equal(delivery?.status, DeliveryStatus.DELIVERED);
    const [attempt] = await attemptsOf(shared.svc, "endless", "e");
    assert.equal(attempt?.responseStatus, 200);
    assert.equal(attempt?.responseBody.length, 4096);
    assert.ok((attempt?.durationMs ?? Infinity) <= 1000);
  } finally {
    server.closeAllConnections();
    server.close();
  }
});

test("a duplicate event is delivered once", async () => {
  const r = await receiver();
  await shared.svc.endpoints.createEndpoint({ tenantId: "dup", id: "ep", url: r.url });
  const first = await shared.svc.emit.emit({
    tenantId: "dup",
    eventId: "same",
    eventType: "x",
    dataJson: "1",
  });
  await finalDeliveries(shared.svc, "dup", "same");
  const again = await shared.svc.emit.emit({
    tenantId: "dup",
    eventId: "same",
    eventType: "x",
    dataJson: "2",
  });
  assert.equal(again.duplicate, true);
  assert.deepEqual(again.deliveryIds, first.deliveryIds);
  // A later event proves the worker has moved past anything the duplicate could have queued.
  await shared.svc.emit.emit({ tenantId: "dup", eventId: "later", eventType: "x", dataJson: "3" });
  await r.waitForRequests(2);
  await finalDeliveries(shared.svc, "dup", "later");
  assert.deepEqual(
    r.requests.map((q) => q.headers["webhook-id"]),
    ["same", "later"],
  );
});

test("ids holding hyphens and colons are delivered separately", async () => {
  const r = await receiver();
  for (const id of ["customer", "1-customer", "acct:7"]) {
    await shared.svc.endpoints.createEndpoint({
      tenantId: "ids",
      id,
      url: r.url,
      eventTypes: [id === "acct:7" ? "c" : "h"],
    });
  }
  await shared.svc.emit.emit({ tenantId: "ids", eventId: "order-1", eventType: "h", dataJson: "{}" });
  await shared.svc.emit.emit({ tenantId: "ids", eventId: "order", eventType: "h", dataJson: "{}" });
  await shared.svc.emit.emit({ tenantId: "ids", eventId: "order:1001", eventType: "c", dataJson: "{}" });
  const expected = {
    "order-1": ["1-customer", "customer"],
    order: ["1-customer", "customer"],
    "order:1001": ["acct:7"],
  };
  const deliveryIds = new Set<string>();
  for (const [eventId, endpoints] of Object.entries(expected)) {
    const deliveries = await finalDeliveries(shared.svc, "ids", eventId);
    assert.ok(deliveries.every((d) => d.status === DeliveryStatus.DELIVERED));
    assert.deepEqual(deliveries.map((d) => d.endpointId).sort(), endpoints);
    for (const d of deliveries) deliveryIds.add(d.id);
  }
  assert.equal(deliveryIds.size, 5);
  // Every delivery reached the receiver under its own event id (on a loaded machine an attempt
  // may also time out at 300 ms and be retried, so count at least, not exactly).
  await r.waitForRequests(5);
  for (const [eventId, endpoints] of Object.entries(expected)) {
    const seen = r.requests.filter((q) => q.headers["webhook-id"] === eventId).length;
    assert.ok(seen >= endpoints.length, `${eventId}: ${seen} requests for ${endpoints.length} endpoints`);
  }
});

test("a delivery whose endpoint was disabled before its turn is cancelled without a request", async () => {
  const r = await receiver(() => "hang");
  await shared.svc.endpoints.createEndpoint({ tenantId: "late", id: "ep", url: r.url });
  await shared.svc.emit.emit({ tenantId: "late", eventId: "first", eventType: "x", dataJson: "{}" });
  await r.waitForRequests(1);
  await shared.svc.endpoints.updateEndpoint({ tenantId: "late", id: "ep", status: EndpointStatus.DISABLED });
  const [delivery] = await finalDeliveries(shared.svc, "late", "first");
  assert.equal(delivery?.status, DeliveryStatus.CANCELLED);
  // The attempt in flight when it was disabled is logged; no retry was sent.
  assert.equal((await attemptsOf(shared.svc, "late", "first")).length, 1);
  assert.equal(r.requests.length, 1);
});
