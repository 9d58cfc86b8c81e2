import assert from "node:assert/strict";
import { test } from "node:test";
import { readTestSettings } from "@hookline/testkit";
import { createEndpoint, deleteEndpoint, emitEvent, loadDeliveryWork } from "./index.js";
import { storeForThisFile } from "./test-helpers.js";

const settings = readTestSettings(process.env);
const store = storeForThisFile(settings);
const now = new Date();

const endpoint = (url: string) => ({
  tenantId: "t",
  id: "ep",
  url,
  description: "",
  eventTypes: [],
  secret: "whsec_first",
});

test("a delivery's work names its event and its own endpoint; once that is deleted, no endpoint, even under its id again", async () => {
  await createEndpoint(store.db, endpoint("https://first.test/hook"), now);
  const { deliveries } = await emitEvent(
    store.db,
    { tenantId: "t", id: "e1", eventType: "order.paid", dataJson: '{"n":1}' },
    now,
  );
  const id = deliveries[0]?.id ?? "";

  const [work, ...more] = await loadDeliveryWork(store.db, [id, id, "dl_unknown"]);
  assert.equal(more.length, 0, "one row per delivery that exists");
  assert.deepEqual(
    [work?.id, work?.eventId, work?.eventType, work?.dataJson, work?.status, work?.attemptCount],
    [id, "e1", "order.paid", '{"n":1}', "pending", 0],
  );
  assert.deepEqual(
    [work?.endpoint?.url, work?.endpoint?.secret, work?.endpoint?.status, work?.endpoint?.previousSecrets],
    ["https://first.test/hook", "whsec_first", "enabled", []],
  );

  await deleteEndpoint(store.db, "t", "ep", now);
  const [orphan] = await loadDeliveryWork(store.db, [id]);
  assert.equal(orphan?.endpoint, undefined);

  // A new endpoint that took the deleted one's id is not this delivery's.
  await createEndpoint(store.db, endpoint("https://second.test/hook"), now);
  const [still] = await loadDeliveryWork(store.db, [id]);
  assert.equal(still?.endpoint, undefined);
});
