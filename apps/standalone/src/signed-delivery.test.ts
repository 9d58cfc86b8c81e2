import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { DeliveryStatus } from "@hookline/contracts";
import { eventually, type Receiver, readTestSettings, startReceiver } from "@hookline/testkit";
import { startTestService, type TestService } from "./test-helpers.js";

const settings = readTestSettings(process.env);

let svc: TestService;
let receiver: Receiver;
before(async () => {
  svc = await startTestService(settings);
  receiver = await startReceiver();
});
after(async () => {
  await receiver.close();
  await svc.close();
});

test("an emitted event arrives signed, with webhook-id = event id, verified by standardwebhooks", async () => {
  const { endpoint } = await svc.endpoints.createEndpoint({
    tenantId: "acme",
    id: "ep:colon",
    url: receiver.url,
  });
  assert.ok(endpoint?.secret.startsWith("whsec_"));
  const emitted = await svc.emit.emit({
    tenantId: "acme",
    eventId: "order:1001",
    eventType: "invoice.paid",
    dataJson: '{"amount": 42}',
  });
  const [request] = await receiver.waitForRequests(1);
  assert.equal(request?.headers["webhook-id"], "order:1001");
  assert.equal(request?.headers["content-type"], "application/json");
  assert.ok(receiver.verifyAll([endpoint?.secret ?? ""]));
  const body = JSON.parse(request?.body ?? "{}");
  assert.equal(body.type, "invoice.paid");
  assert.deepEqual(body.data, { amount: 42 });
  const { deliveries } = await eventually(
    () => svc.emit.getEvent({ tenantId: "acme", eventId: "order:1001" }),
    (r) => r.deliveries[0]?.status === DeliveryStatus.DELIVERED,
  );
  assert.equal(deliveries[0]?.id, emitted.deliveryIds[0]);
  const { attempts } = await svc.log.listAttempts({ tenantId: "acme", eventId: "order:1001" });
  assert.deepEqual(
    attempts.map((a) => [a.attemptNumber, a.responseStatus, a.error, a.deliveryStatus]),
    [[1, 200, "", DeliveryStatus.DELIVERED]],
  );
});
