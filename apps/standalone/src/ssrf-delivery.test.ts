import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { DeliveryStatus } from "@hookline/contracts";
import { type Receiver, readTestSettings, startReceiver } from "@hookline/testkit";
import { attemptsOf, finalDeliveries, startTestService, type TestService } from "./test-helpers.js";

const settings = readTestSettings(process.env);

// Loopback is NOT allowed here (the test backends allow it), so a name resolving to it is blocked.
let svc: TestService;
let receiver: Receiver;
before(async () => {
  svc = await startTestService(settings, {
    HOOKLINE_ALLOWED_CIDRS: "",
    HOOKLINE_RETRY_SCHEDULE: "50ms,100ms,200ms",
    HOOKLINE_DELIVERY_TIMEOUT_MS: "300",
  });
  receiver = await startReceiver();
});
after(async () => {
  await receiver.close();
  await svc.close();
});

test("a hostname that resolves to a blocked address fails the delivery at once, saying why", async () => {
  // The api accepts a hostname (only DNS can tell where it points); the worker refuses it.
  const url = receiver.url.replace("127.0.0.1", "localhost");
  await svc.endpoints.createEndpoint({ tenantId: "ssrf", id: "local", url });
  await svc.emit.emit({ tenantId: "ssrf", eventId: "e", eventType: "x", dataJson: "{}" });

  const [delivery] = await finalDeliveries(svc, "ssrf", "e");
  assert.equal(delivery?.status, DeliveryStatus.FAILED);
  // Longer than the whole retry schedule: no further attempt follows.
  await sleep(600);
  const attempts = await attemptsOf(svc, "ssrf", "e");
  assert.equal(attempts.length, 1);
  assert.equal(attempts[0]?.responseStatus, 0);
  assert.match(attempts[0]?.error ?? "", /^blocked: resolves to (127\.0\.0\.1|::1), a loopback address$/);
  assert.equal(receiver.requests.length, 0);
});
