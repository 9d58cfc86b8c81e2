import assert from "node:assert/strict";
import { test } from "node:test";
import { DeliveryStatus } from "@hookline/contracts";
import { eventually, held, readTestSettings } from "@hookline/testkit";
import { sql } from "kysely";
import { attemptsOf, finalDeliveries, sharedTestService } from "./test-helpers.js";

const settings = readTestSettings(process.env);
// Sweeps by hand: a held record must not be taken for a stranded delivery by a timer's sweep.
/** The worker's hookline_attempt_writes_pending gauge. */
async function pendingWrites(): Promise<number | undefined> {
  const gauge = await shared.svc.service.metrics.registry
    .getSingleMetric("hookline_attempt_writes_pending")
    ?.get();
  return gauge?.values[0]?.value;
}

const shared = sharedTestService(settings, { HOOKLINE_SWEEP_INTERVAL: "1h", HOOKLINE_SWEEP_GRACE: "0ms" });

test("an endpoint held to one in flight gets its next delivery while the last answer is still being recorded", {
  skip:
    settings.kind !== "servers" &&
    "needs a second PostgreSQL session to hold the attempt log (embedded, one PGlite session runs every statement)",
}, async () => {
  const { svc } = shared;
  const receiver = await shared.receiver();
  await svc.endpoints.createEndpoint({ tenantId: "held", id: "ep", url: receiver.url, maxInFlight: 1 });
  const lock = held();
  const locked = held();
  // A transaction of our own holds inserts into the attempt log (SHARE lets reads through).
  const holding = svc.service.infra.store.db.transaction().execute(async (trx) => {
    await sql`lock table hookline.attempts in share mode`.execute(trx);
    locked.release();
    await lock.promise;
  });
  try {
    await locked.promise;
    for (const n of [1, 2, 3])
      await svc.emit.emit({ tenantId: "held", eventId: `e${n}`, eventType: "x", dataJson: "{}" });
    // With the slot held until the attempt was recorded, the first request was the only one.
    await receiver.waitForRequests(3);
    const { attempts } = await svc.log.listAttempts({ tenantId: "held", pageSize: 10 });
    assert.equal(attempts.length, 0, "the three answers are still waiting to be recorded");
    assert.equal(await pendingWrites(), 3, "and the worker's gauge counts them");
    // A look for due work now finds the three overdue with nothing in flight: that is their
    // writes, not a stalled job, so the queue is not held open for BullMQ's stalled check.
    await eventually(
      async () => Date.now(),
      (now) => now > (receiver.requests[0]?.receivedAt ?? 0) + 300,
    );
    await svc.service.worker.discover();
  } finally {
    lock.release();
    await holding;
  }
  for (const n of [1, 2, 3]) {
    const [delivery] = await finalDeliveries(svc, "held", `e${n}`);
    assert.equal(delivery?.status, DeliveryStatus.DELIVERED);
    assert.deepEqual(
      (await attemptsOf(svc, "held", `e${n}`)).map((a) => [a.attemptNumber, a.responseStatus]),
      [[1, 200]],
    );
  }
  assert.equal(receiver.requests.length, 3, "each delivery was sent once");
  assert.equal(await pendingWrites(), 0);
  // Idle for HOOKLINE_QUEUE_IDLE (2 s), the queue closes; a stalled check would hold it 22 s.
  await eventually(
    async () => svc.service.worker.openQueues,
    (open) => open === 0,
    { timeoutMs: 10_000 },
  );
});

test("an attempt whose record fails is made again by the sweeper, and the log holds it once", async () => {
  const { svc } = shared;
  const db = svc.service.infra.store.db;
  // The store refuses this tenant's first attempt row, as a failing database would.
  await sql`create sequence hookline.test_refused_rows`.execute(db);
  await sql`
    create function hookline.test_refuse_first_row() returns trigger language plpgsql as $$
    begin
      if new.tenant_id = 'refused' then
        if nextval('hookline.test_refused_rows') = 1 then
          raise exception 'attempt row refused (test)';
        end if;
      end if;
      return new;
    end $$`.execute(db);
  await sql`
    create trigger test_refuse_first_row before insert on hookline.attempts
    for each row execute function hookline.test_refuse_first_row()`.execute(db);
  const receiver = await shared.receiver();
  await svc.endpoints.createEndpoint({ tenantId: "refused", id: "ep", url: receiver.url });
  await svc.emit.emit({ tenantId: "refused", eventId: "e", eventType: "x", dataJson: "{}" });
  await receiver.waitForRequests(1);
  await eventually(
    async () => svc.logLines.filter((line) => line.includes("attempt row refused (test)")),
    (lines) => lines.length > 0,
  );

  // Its job is gone (once BullMQ has removed it) and the delivery pending: stranded, as if the
  // worker had died after the request. A sweep puts it back.
  await eventually(
    () => svc.service.worker.sweep(),
    (count) => count === 1,
  );
  const [delivery] = await finalDeliveries(svc, "refused", "e");
  assert.equal(delivery?.status, DeliveryStatus.DELIVERED);
  const [first, second] = receiver.requests;
  assert.equal(receiver.requests.length, 2, "sent again once");
  assert.equal(second?.headers["webhook-id"], first?.headers["webhook-id"], "the same webhook-id");
  assert.deepEqual(
    (await attemptsOf(svc, "refused", "e")).map((a) => [a.attemptNumber, a.responseStatus]),
    [[1, 200]],
    "one attempt in the log",
  );
});
