import assert from "node:assert/strict";
import { test } from "node:test";
import { DeliveryStatus } from "@hookline/contracts";
import { eventually, readTestSettings } from "@hookline/testkit";
import { attemptsOf, sharedTestService } from "./test-helpers.js";

const settings = readTestSettings(process.env);

const shared = sharedTestService(settings, {
  HOOKLINE_DELIVERY_TIMEOUT_MS: "1000",
  HOOKLINE_ENDPOINT_CONCURRENCY: "2",
});

const millis = (t: { seconds: bigint; nanos: number } | undefined) =>
  Number(t?.seconds ?? 0n) * 1000 + Math.floor((t?.nanos ?? 0) / 1e6);

test("a hanging endpoint holds only its own concurrency: healthy deliveries finish before its first timeout", async () => {
  const hanging = await shared.receiver(() => "hang");
  const healthy = [await shared.receiver(), await shared.receiver()];
  await shared.svc.endpoints.createEndpoint({ tenantId: "iso", id: "dead", url: hanging.url });
  await shared.svc.endpoints.createEndpoint({ tenantId: "iso", id: "ok-1", url: healthy[0]?.url ?? "" });
  await shared.svc.endpoints.createEndpoint({ tenantId: "iso", id: "ok-2", url: healthy[1]?.url ?? "" });
  // The hanging endpoint's events go first, so a shared queue would put them ahead of the rest.
  for (const n of [1, 2, 3]) {
    await shared.svc.emit.emit({ tenantId: "iso", eventId: `e${n}`, eventType: "x", dataJson: "{}" });
  }
  await Promise.all(healthy.map((r) => r.waitForRequests(3)));
  // An attempt is recorded just after its answer, so the last ones may still be on their way.
  const healthyAttempts = await eventually(
    async () => {
      const all = [];
      for (const n of [1, 2, 3])
        for (const id of ["ok-1", "ok-2"]) all.push(...(await attemptsOf(shared.svc, "iso", `e${n}`, id)));
      return all;
    },
    (all) => all.length >= 6,
    { everyMs: 5 },
  );
  assert.equal(healthyAttempts.length, 6);
  assert.ok(healthyAttempts.every((a) => a.deliveryStatus === DeliveryStatus.DELIVERED));
  const lastHealthyEnd = Math.max(...healthyAttempts.map((a) => millis(a.startedAt) + a.durationMs));
  const firstHang = Math.min(...hanging.requests.map((r) => r.receivedAt));
  assert.ok(
    lastHealthyEnd < firstHang + 1000,
    `healthy done ${lastHealthyEnd - firstHang} ms after the first hang`,
  );
  // Only two of the hanging endpoint's deliveries were in flight before its first timeout freed
  // a slot: its cap, not everyone's.
  assert.equal(hanging.requests.filter((r) => r.receivedAt < firstHang + 1000).length, 2);
});
