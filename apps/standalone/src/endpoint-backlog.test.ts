import assert from "node:assert/strict";
import { test } from "node:test";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { DeliveryStatus } from "@hookline/contracts";
import {
  BACKLOG_PAGE,
  connectStore,
  type DeliveryStatusValue,
  emitEvents,
  type StoreDb,
} from "@hookline/store";
import { eventually, readTestSettings } from "@hookline/testkit";
import { sql } from "kysely";
import { sharedTestService, startTestService } from "./test-helpers.js";

const settings = readTestSettings(process.env);
const shared = sharedTestService(settings, { HOOKLINE_RETRY_SCHEDULE: "1h" });

/** More than a page: the backlog RPCs work through it in several statements. */
const BACKLOG = BACKLOG_PAGE + 200;

/** Writes a backlog straight into the store (as a long outage would leave it); returns the ids. */
async function backlog(
  tenantId: string,
  status: DeliveryStatusValue,
  db: StoreDb = shared.svc.service.infra.store.db,
): Promise<string[]> {
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
  // A fixed 32 in flight: what is under test is that each delivery goes once, not how fast the
  // adaptive limit climbs (from its floor it takes 1,200 deliveries a while).
  await shared.svc.endpoints.createEndpoint({
    tenantId: "big-recover",
    id: "ep",
    url: r.url,
    maxInFlight: 32,
  });
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

test("an api shutting down ends a backlog call at its next page: a delete answers, a recovery answers UNAVAILABLE with its count", {
  skip:
    settings.kind === "embedded" &&
    "holding rows needs a second session, which the embedded database has not",
}, async () => {
  const svc = await startTestService(settings, { HOOKLINE_RETRY_SCHEDULE: "1h" });
  const r = await shared.receiver();
  const db = svc.service.infra.store.db;
  const holder = await connectStore({ databaseUrl: String(svc.backend.databaseUrl) });
  try {
    for (const tenantId of ["stop-delete", "stop-recover"]) {
      await svc.endpoints.createEndpoint({ tenantId, id: "ep", url: r.url });
    }
    await backlog("stop-delete", "pending", db);
    await backlog("stop-recover", "failed", db);
    // Held rows keep both calls in their first page (a statement that locks deliveries, then
    // updates them) while the api is told to stop.
    const hold = await holder.db.startTransaction().execute();
    await sql`select id from hookline.deliveries for update`.execute(hold);
    const deleting = svc.endpoints.deleteEndpoint({ tenantId: "stop-delete", id: "ep" });
    const recovering = svc.endpoints.recoverEndpoint({
      tenantId: "stop-recover",
      id: "ep",
      since: timestampFromDate(new Date(Date.now() - 2 * 3_600_000)),
    });
    await eventually(
      async () => {
        const { rows } = await sql<{ n: number }>`
          select count(*)::int as n from pg_stat_activity
           where wait_event_type = 'Lock' and datname = current_database()
             and query ilike '%update%deliveries%'`.execute(holder.db);
        return rows[0]?.n ?? 0;
      },
      (waiting) => waiting >= 2,
    );
    const closing = svc.service.close();
    await hold.commit().execute();

    // Handled before waiting on the delete: the recovery may well be refused first.
    const refused = assert.rejects(recovering, (error: unknown) => {
      const e = ConnectError.from(error);
      assert.equal(e.code, Code.Unavailable);
      assert.match(
        e.rawMessage,
        new RegExp(`shutting down: ${BACKLOG_PAGE} failed deliveries were requeued; call again`),
      );
      return true;
    });
    await deleting; // answered: the endpoint is gone
    await refused;
    await closing;
    const count = async (tenantId: string, status: DeliveryStatusValue) =>
      (
        await holder.db
          .selectFrom("deliveries")
          .select((eb) => eb.fn.countAll<number>().as("n"))
          .where("tenant_id", "=", tenantId)
          .where("status", "=", status)
          .executeTakeFirstOrThrow()
      ).n;
    assert.deepEqual(
      [Number(await count("stop-delete", "cancelled")), Number(await count("stop-delete", "pending"))],
      [BACKLOG_PAGE, BACKLOG - BACKLOG_PAGE],
      "one page cancelled; the rest at their turn",
    );
    assert.equal(Number(await count("stop-recover", "failed")), BACKLOG - BACKLOG_PAGE, "one page requeued");
    assert.equal(
      (await holder.db.selectFrom("endpoints").select("id").where("tenant_id", "=", "stop-delete").execute())
        .length,
      0,
    );
  } finally {
    await holder.close();
    await svc.close();
  }
});
