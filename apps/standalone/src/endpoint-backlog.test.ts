import assert from "node:assert/strict";
import { test } from "node:test";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { DeliveryStatus } from "@hookline/contracts";
import { BACKLOG_PAGE, type DeliveryStatusValue, emitEvents } from "@hookline/store";
import { eventually, readTestSettings } from "@hookline/testkit";
import { sharedTestService } from "./test-helpers.js";

const settings = readTestSettings(process.env);
const shared = sharedTestService(settings, { HOOKLINE_RETRY_SCHEDULE: "1h" });

/** More than a page: the backlog RPCs work through it in several statements. */
const BACKLOG = BACKLOG_PAGE + 200;

/** Writes a backlog straight into the store (as a long outage would leave it); returns the ids. */
async function backlog(tenantId: string, status: DeliveryStatusValue): Promise<string[]> {
  const db = shared.svc.service.infra.store.db;
  const events = Array.from({ length: BACKLOG }, (_, n) => ({
    tenantId,
    id: `ev${n}`,
    eventType: "x",
    dataJson: "{}",
  }));
  const created = new Date(Date.now() - 3_600_000);
  const ids = (await emitEvents(db, events, created)).flatMap((r) => r.deliveries.map((d) => d.id));
  // Pending ones are due in an hour: nothing delivers them meanwhile (they have no job either).
  const due = status === "pending" ? new Date(Date.now() + 3_600_000) : null;
  await db
    .updateTable("deliveries")
    .set({ status, attempt_count: 8, next_attempt_at: due })
    .where("tenant_id", "=", tenantId)
    .execute();
  return ids;
}

/** How many of the tenant's deliveries are in each status, read page by page. */
async function statuses(tenantId: string): Promise<[DeliveryStatus, number][]> {
  const counts = new Map<DeliveryStatus, number>();
  let pageToken = "";
  do {
    const page = await shared.svc.log.listDeliveries({ tenantId, pageSize: 1000, pageToken });
    for (const d of page.deliveries) counts.set(d.status, (counts.get(d.status) ?? 0) + 1);
    pageToken = page.nextPageToken;
  } while (pageToken);
  return [...counts];
}

test("RecoverEndpoint requeues a backlog larger than a page, each delivery sent once", async () => {
  const r = await shared.receiver();
  await shared.svc.endpoints.createEndpoint({ tenantId: "big-recover", id: "ep", url: r.url });
  const ids = await backlog("big-recover", "failed");
  const since = timestampFromDate(new Date(Date.now() - 2 * 3_600_000));

  const { requeued } = await shared.svc.endpoints.recoverEndpoint({
    tenantId: "big-recover",
    id: "ep",
    since,
  });
  assert.equal(requeued, BACKLOG);
  const requests = await r.waitForRequests(BACKLOG, 120_000);
  const sent = new Set(requests.map((request) => request.headers["webhook-id"]));
  assert.equal(sent.size, BACKLOG, "each event's delivery once");
  await eventually(
    () => statuses("big-recover"),
    (counts) => counts.length === 1 && counts[0]?.[0] === DeliveryStatus.DELIVERED,
  );
  assert.deepEqual(await statuses("big-recover"), [[DeliveryStatus.DELIVERED, ids.length]]);
  const again = await shared.svc.endpoints.recoverEndpoint({ tenantId: "big-recover", id: "ep", since });
  assert.equal(again.requeued, 0);
  assert.equal(r.requests.length, BACKLOG, "nothing sent twice");
});

test("DeleteEndpoint has cancelled a backlog larger than a page when it answers", async () => {
  const r = await shared.receiver();
  await shared.svc.endpoints.createEndpoint({ tenantId: "big-delete", id: "ep", url: r.url });
  await backlog("big-delete", "pending");

  await shared.svc.endpoints.deleteEndpoint({ tenantId: "big-delete", id: "ep" });
  assert.deepEqual(await statuses("big-delete"), [[DeliveryStatus.CANCELLED, BACKLOG]]);
  assert.equal(r.requests.length, 0);
});
