import assert from "node:assert/strict";
import { test } from "node:test";
import { Code, ConnectError } from "@connectrpc/connect";
import { DeliveryStatus } from "@hookline/contracts";
import { eventually, readTestSettings, type SlowReceiver, startSlowReceiver } from "@hookline/testkit";
import { queueAtOnce, sharedTestService, type TestService } from "./test-helpers.js";

const settings = readTestSettings(process.env);
const shared = sharedTestService(settings, { HOOKLINE_ENDPOINT_CONCURRENCY: "2" });

/** Emits count events to a tenant and waits until every delivery is delivered. */
async function emitAndDeliver(svc: Pick<TestService, "emit" | "log">, tenantId: string, count: number) {
  await Promise.all(
    Array.from({ length: count }, (_, n) =>
      svc.emit.emit({ tenantId, eventId: `e${n}`, eventType: "x", dataJson: "{}" }),
    ),
  );
  return eventually(
    () => svc.log.listDeliveries({ tenantId, pageSize: 1000 }),
    (r) => r.deliveries.length === count && r.deliveries.every((d) => d.status === DeliveryStatus.DELIVERED),
    { timeoutMs: 60_000 },
  );
}

/**
 * Starts per second over the whole seconds of a run: a limit of r/s may start r at the top of
 * each second, so the run is measured in whole seconds from its first start.
 */
function observedRate(receiver: SlowReceiver): number {
  const { arrivals } = receiver.state;
  const first = arrivals[0] ?? 0;
  const seconds = Math.floor(((arrivals[arrivals.length - 1] ?? 0) - first) / 1000);
  return arrivals.filter((t) => t < first + seconds * 1000).length / seconds;
}

test("an endpoint's max_in_flight replaces the default cap, and an update changes it", async () => {
  const receiver = await startSlowReceiver(150);
  try {
    const { endpoint } = await shared.svc.endpoints.createEndpoint({
      tenantId: "cap",
      id: "ep",
      url: receiver.url,
      maxInFlight: 5,
    });
    assert.equal(endpoint?.maxInFlight, 5);
    await emitAndDeliver(shared.svc, "cap", 20);
    assert.equal(receiver.state.maxInFlight, 5, "five at once: its own cap, not the default 2");

    const updated = await shared.svc.endpoints.updateEndpoint({ tenantId: "cap", id: "ep", maxInFlight: 0 });
    assert.equal(updated.endpoint?.maxInFlight, undefined, "0 returns to the service default");
    receiver.state.maxInFlight = 0;
    await Promise.all(
      Array.from({ length: 10 }, (_, n) =>
        shared.svc.emit.emit({ tenantId: "cap", eventId: `again${n}`, eventType: "x", dataJson: "{}" }),
      ),
    );
    await eventually(
      () =>
        shared.svc.log.listDeliveries({ tenantId: "cap", status: DeliveryStatus.DELIVERED, pageSize: 100 }),
      (r) => r.deliveries.length === 30,
    );
    assert.equal(receiver.state.maxInFlight, 2, "back to the default of 2");
  } finally {
    await receiver.close();
  }
});

test("a rate limit spaces attempts out; held-back deliveries are no attempts and no failures", async () => {
  const receiver = await startSlowReceiver(0);
  try {
    await shared.svc.endpoints.createEndpoint({
      tenantId: "rate",
      id: "ep",
      url: receiver.url,
      maxInFlight: 10,
      rateLimitPerSecond: 20,
    });
    await queueAtOnce(shared.svc, "rate", 60);
    const { deliveries } = await eventually(
      () => shared.svc.log.listDeliveries({ tenantId: "rate", pageSize: 100 }),
      (r) => r.deliveries.length === 60 && r.deliveries.every((d) => d.status === DeliveryStatus.DELIVERED),
    );
    const rate = observedRate(receiver);
    const t0 = receiver.state.arrivals[0] ?? 0;
    // Never above the limit; and it keeps pace (the bench measures accuracy on a quiet machine:
    // a loaded one delays the start of each second's window).
    assert.ok(
      rate >= 14 && rate <= 22,
      `observed ${rate.toFixed(1)}/s for a limit of 20/s: ${receiver.state.arrivals.map((t) => t - t0).join(" ")}`,
    );
    assert.ok(
      deliveries.every((d) => d.attemptCount === 1),
      "waiting for the limit made no attempt and no failure",
    );
  } finally {
    await receiver.close();
  }
});

test("limits out of range are refused, naming the field, and nothing is written", async () => {
  const cases = [
    [{ maxInFlight: 0 }, "max_in_flight"],
    [{ maxInFlight: 1001 }, "max_in_flight"],
    [{ rateLimitPerSecond: 0 }, "rate_limit_per_second"],
    [{ rateLimitPerSecond: -1 }, "rate_limit_per_second"],
    [{ rateLimitPerSecond: Number.NaN }, "rate_limit_per_second"],
    [{ rateLimitPerSecond: 10_001 }, "rate_limit_per_second"],
  ] as const;
  for (const [limits, field] of cases) {
    await assert.rejects(
      shared.svc.endpoints.createEndpoint({
        tenantId: "bad",
        id: "ep",
        url: "https://example.com/",
        ...limits,
      }),
      (error: unknown) =>
        error instanceof ConnectError &&
        error.code === Code.InvalidArgument &&
        error.rawMessage.startsWith(field),
    );
  }
  const { endpoints } = await shared.svc.endpoints.listEndpoints({ tenantId: "bad" });
  assert.equal(endpoints.length, 0);
});
