import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { readTestSettings } from "@hookline/testkit";
import { createEndpoint, emitEvents, findOverdueDeliveries, type OverduePosition } from "./index.js";
import { openTestStore } from "./test-helpers.js";

const settings = readTestSettings(process.env);

let store: Awaited<ReturnType<typeof openTestStore>>;
before(async () => {
  store = await openTestStore(settings);
});
after(() => store.close());

test("overdue deliveries are read page after page in (due time, id) order, every one once", async () => {
  const early = new Date("2026-11-30T10:00:00Z");
  const late = new Date("2026-11-30T10:00:05Z");
  await createEndpoint(
    store.db,
    {
      tenantId: "t",
      id: "ep",
      url: "https://example.test/",
      description: "",
      eventTypes: [],
      secret: "whsec_x",
    },
    early,
  );
  // Two emits of 7 events: the deliveries of each share one due time, so pages split ties.
  const emit = (prefix: string, at: Date) =>
    emitEvents(
      store.db,
      Array.from({ length: 7 }, (_, n) => ({
        tenantId: "t",
        id: `${prefix}${n}`,
        eventType: "x",
        dataJson: "{}",
      })),
      at,
    );
  const lateIds = (await emit("late", late)).flatMap((r) => r.deliveries.map((d) => d.id));
  const earlyIds = (await emit("early", early)).flatMap((r) => r.deliveries.map((d) => d.id));
  const dueBefore = new Date("2026-11-30T11:00:00Z");

  const read: string[] = [];
  let after: OverduePosition | undefined;
  for (let page = 0; page < 10; page += 1) {
    const rows = await findOverdueDeliveries(store.db, dueBefore, 4, after);
    read.push(...rows.map((row) => row.id));
    const last = rows.at(-1);
    if (rows.length < 4 || !last) break;
    after = { dueAt: last.dueAt, id: last.id };
  }
  // Ids order by the database's collation, so within one due time compare as sets.
  assert.equal(read.length, 14, `each read once: ${read.join(" ")}`);
  assert.deepEqual(new Set(read.slice(0, 7)), new Set(earlyIds));
  assert.deepEqual(new Set(read.slice(7)), new Set(lateIds));
  // Only what is due before the bound.
  assert.deepEqual(
    new Set((await findOverdueDeliveries(store.db, late, 100)).map((row) => row.id)),
    new Set(earlyIds),
  );
});
