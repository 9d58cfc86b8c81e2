import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { readTestSettings } from "@hookline/testkit";
import { sql } from "kysely";
import { startTestApi, type TestApi, uniqueTenant } from "./test-helpers.js";

// The queue refusing an add, on BullMQ's PostgreSQL backend: the SQL function it adds jobs with is
// taken away for the call. (On Redis a refused add needs Redis itself down: the fault suite.)
const settings = readTestSettings(process.env);

let api: TestApi;
before(async () => {
  api = await startTestApi(settings);
});
after(() => api?.close());

async function withoutQueueAdds<T>(call: () => Promise<T>): Promise<T> {
  const rename = (from: string, to: string) =>
    sql`DO $$ DECLARE f regprocedure; BEGIN
      SELECT p.oid::regprocedure INTO f FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE n.nspname = 'bullmq' AND p.proname = ${sql.lit(from)};
      EXECUTE format('ALTER FUNCTION %s RENAME TO ${sql.raw(to)}', f);
    END $$`.execute(api.infra.store.db);
  await rename("add_flow", "add_flow_taken_away");
  try {
    return await call();
  } finally {
    await rename("add_flow_taken_away", "add_flow");
  }
}

const failDelivery = (deliveryId: string) =>
  api.infra.store.db
    .updateTable("deliveries")
    .set({ status: "failed", next_attempt_at: null })
    .where("id", "=", deliveryId)
    .execute();

test("a queue add that fails after the commit is logged, and Emit, RetryDelivery and RecoverEndpoint still answer what they committed", async (t) => {
  if (api.infra.queueBackend.kind !== "postgres")
    return t.skip("a refused add is staged on PostgreSQL's backend");
  const tenant = uniqueTenant("no-queue");
  await api.call("CreateEndpoint", { tenant_id: tenant, id: "ep", url: "https://hooks.test/ep" });
  const ref = { tenantId: tenant, endpointId: "ep" };

  const emitted = await withoutQueueAdds(() =>
    api.call("Emit", { tenant_id: tenant, event_id: "e", event_type: "x", data_json: "{}" }),
  );
  const [deliveryId = ""] = emitted.delivery_ids;
  assert.equal(emitted.duplicate, false);
  assert.equal(await api.infra.producer.hasLiveJob(ref, deliveryId, 1), false, "the add did fail");

  await failDelivery(deliveryId);
  const retried = await withoutQueueAdds(() =>
    api.call("RetryDelivery", { tenant_id: tenant, delivery_id: deliveryId }),
  );
  assert.equal(retried.delivery.status, "DELIVERY_STATUS_PENDING");

  await failDelivery(deliveryId);
  const since = { seconds: String(Math.floor(Date.now() / 1000) - 3600), nanos: 0 };
  const recovered = await withoutQueueAdds(() =>
    api.call("RecoverEndpoint", { tenant_id: tenant, id: "ep", since }),
  );
  assert.equal(recovered.requeued, 1);

  // Each left to the sweeper, and said so in the log.
  const warned = api.logLines.filter((line) => line.includes("enqueue failed; the sweeper will retry"));
  assert.equal(warned.length, 3, warned.join("\n"));
  assert.ok(warned[0]?.includes('"eventId":"e"'));
  assert.ok(warned[1]?.includes(deliveryId));
  assert.ok(warned[2]?.includes('"endpointId":"ep"'));
});
