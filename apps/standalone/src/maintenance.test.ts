import assert from "node:assert/strict";
import { test } from "node:test";
import { DeliveryStatus, EndpointStatus } from "@hookline/contracts";
import { emitEvent, recordAttempts } from "@hookline/store";
import { eventually, readTestSettings } from "@hookline/testkit";
import { sql } from "kysely";
import { finalDeliveries, sharedTestService } from "./test-helpers.js";

const settings = readTestSettings(process.env);

// Maintenance is run by hand; "failing for 1 s" stands in for the default 5 days.
const shared = sharedTestService(settings, {
  HOOKLINE_MAINTENANCE_INTERVAL: "1h",
  HOOKLINE_DISABLE_AFTER: "1s",
  HOOKLINE_RETENTION: "1d",
  HOOKLINE_RETRY_SCHEDULE: "20ms",
});

test("an endpoint whose attempts fail over the configured period is disabled; re-enabling resumes delivery", async () => {
  let healthy = false;
  const failing = await shared.receiver(() => ({ status: healthy ? 200 : 500 }));
  const fine = await shared.receiver();
  await shared.svc.endpoints.createEndpoint({ tenantId: "auto", id: "failing", url: failing.url });
  await shared.svc.endpoints.createEndpoint({ tenantId: "auto", id: "fine", url: fine.url });
  await shared.svc.emit.emit({ tenantId: "auto", eventId: "e1", eventType: "x", dataJson: "{}" });
  await finalDeliveries(shared.svc, "auto", "e1");
  assert.deepEqual((await shared.svc.service.worker.maintain())?.disabled, [], "not failing long enough yet");
  await eventually(
    async () => Date.now(),
    (t) => t > (failing.requests[0]?.receivedAt ?? 0) + 1100,
    { everyMs: 100 },
  );
  assert.deepEqual(
    (await shared.svc.service.worker.maintain())?.disabled,
    [],
    "over 1 s since its first failure, but not tried since: not failing over the period",
  );
  // Tried again, still failing: its failures now span more than the period.
  await shared.svc.emit.emit({ tenantId: "auto", eventId: "e1b", eventType: "x", dataJson: "{}" });
  await finalDeliveries(shared.svc, "auto", "e1b");
  const result = await shared.svc.service.worker.maintain();
  assert.deepEqual(result?.disabled, [{ tenantId: "auto", endpointId: "failing" }]);
  const { endpoint } = await shared.svc.endpoints.getEndpoint({ tenantId: "auto", id: "failing" });
  assert.equal(endpoint?.status, EndpointStatus.DISABLED);
  assert.match(endpoint?.disabledReason ?? "", /every attempt failed for 1 s/);

  healthy = true;
  await shared.svc.endpoints.updateEndpoint({
    tenantId: "auto",
    id: "failing",
    status: EndpointStatus.ENABLED,
  });
  await shared.svc.emit.emit({ tenantId: "auto", eventId: "e2", eventType: "x", dataJson: "{}" });
  const deliveries = await finalDeliveries(shared.svc, "auto", "e2");
  assert.ok(deliveries.every((d) => d.status === DeliveryStatus.DELIVERED));
  assert.deepEqual(
    (await shared.svc.service.worker.maintain())?.disabled,
    [],
    "a re-enabled endpoint starts afresh",
  );
});

test("retention purges events, deliveries and attempts older than the window, and nothing newer", async () => {
  const r = await shared.receiver();
  await shared.svc.endpoints.createEndpoint({ tenantId: "old", id: "ep", url: r.url });
  const db = shared.svc.service.infra.store.db;
  const longAgo = new Date(Date.now() - 2 * 86_400_000);
  for (const n of [1, 2, 3]) {
    const { deliveries } = await emitEvent(
      db,
      { tenantId: "old", id: `old${n}`, eventType: "x", dataJson: "{}" },
      longAgo,
    );
    await recordAttempts(
      db,
      deliveries.map((d) => ({
        deliveryId: d.id,
        attemptNumber: 1,
        url: "https://x.test/hook",
        startedAt: longAgo,
        durationMs: 1,
        responseStatus: 200,
        responseBody: "",
        error: "",
        deliveryStatus: "delivered" as const,
        nextAttemptAt: null,
      })),
      longAgo,
    );
  }
  await shared.svc.emit.emit({ tenantId: "old", eventId: "recent", eventType: "x", dataJson: "{}" });
  await finalDeliveries(shared.svc, "old", "recent");
  const result = await shared.svc.service.worker.maintain();
  assert.equal(result?.purged, 9, "3 attempts, 3 deliveries, 3 events");
  await assert.rejects(shared.svc.emit.getEvent({ tenantId: "old", eventId: "old1" }), /not found/);
  const { deliveries } = await shared.svc.emit.getEvent({ tenantId: "old", eventId: "recent" });
  assert.equal(deliveries[0]?.status, DeliveryStatus.DELIVERED);
  const { attempts } = await shared.svc.log.listAttempts({ tenantId: "old" });
  assert.deepEqual(
    attempts.map((a) => a.eventId),
    ["recent"],
  );
});

test("a purged delivery takes its recent attempts with it, and its event id emitted again is delivered once per attempt", async () => {
  let answered = 0;
  const r = await shared.receiver(() => ({ status: answered++ === 0 ? 500 : 200 }));
  await shared.svc.endpoints.createEndpoint({ tenantId: "resent", id: "ep", url: r.url });
  const db = shared.svc.service.infra.store.db;
  const longAgo = new Date(Date.now() - 2 * 86_400_000);
  const lately = new Date(Date.now() - 60_000);
  const { deliveries } = await emitEvent(
    db,
    { tenantId: "resent", id: "again", eventType: "x", dataJson: "{}" },
    longAgo,
  );
  const deliveryId = deliveries[0]?.id ?? "";
  const attempt = { deliveryId, url: r.url, durationMs: 1, responseBody: "", error: "" };
  // Attempt 1 failed two days ago; attempt 2, a minute ago, delivered it: newer than the window.
  await recordAttempts(
    db,
    [
      {
        ...attempt,
        attemptNumber: 1,
        startedAt: longAgo,
        responseStatus: 500,
        deliveryStatus: "pending",
        nextAttemptAt: lately,
      },
    ],
    longAgo,
  );
  await recordAttempts(
    db,
    [
      {
        ...attempt,
        attemptNumber: 2,
        startedAt: lately,
        responseStatus: 200,
        deliveryStatus: "delivered",
        nextAttemptAt: null,
      },
    ],
    lately,
  );
  assert.equal(
    (await shared.svc.service.worker.maintain())?.purged,
    4,
    "2 attempts, the delivery, the event",
  );
  const left = await shared.svc.log.listAttempts({ tenantId: "resent" });
  assert.deepEqual(left.attempts, [], "no attempt outlives its delivery");

  // The same event id again makes the same delivery id: its attempts 1 and 2 are new ones.
  await shared.svc.emit.emit({ tenantId: "resent", eventId: "again", eventType: "x", dataJson: "{}" });
  const [final] = await finalDeliveries(shared.svc, "resent", "again");
  assert.equal(final?.status, DeliveryStatus.DELIVERED);
  const { attempts } = await shared.svc.log.listAttempts({ tenantId: "resent" });
  assert.deepEqual(
    attempts.map((a) => a.responseStatus),
    [500, 200],
  );
  assert.equal(r.requests.length, 2, "each attempt sent once");
});

test("embedded, maintenance vacuums: rows rewritten on every attempt do not grow the store for ever", async () => {
  const { db, embedded } = shared.svc.service.infra.store;
  const result = await shared.svc.service.worker.maintain();
  // PostgreSQL vacuums itself (autovacuum); only embedded PGlite needs it done.
  assert.equal(result?.vacuumed, embedded);
  if (!embedded) return;
  await sql`create table hookline.churn as select n as id, 0 as v from generate_series(1, 5000) as n`.execute(
    db,
  );
  const size = async () =>
    Number(
      (await sql<{ size: string }>`select pg_relation_size('hookline.churn') as size`.execute(db)).rows[0]
        ?.size,
    );
  const rewriteEveryRow = async (times: number) => {
    for (let i = 0; i < times; i++) await sql`update hookline.churn set v = v + 1`.execute(db);
  };
  const created = await size();
  await rewriteEveryRow(3);
  const unvacuumedGrowth = (await size()) - created;
  await shared.svc.service.worker.maintain();
  const before = await size();
  await rewriteEveryRow(3);
  // Without the vacuum the three rewrites would have added as much again; with it they reuse space.
  assert.ok(
    (await size()) - before < unvacuumedGrowth / 4,
    `the table grew from ${before} to ${await size()} bytes (three rewrites unvacuumed took ${unvacuumedGrowth})`,
  );
});
