import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { readTestSettings } from "@hookline/testkit";
import { createEndpoint, emitEvents, InvalidPageTokenError, listDeliveries, listEndpoints } from "./index.js";
import { openTestStore } from "./test-helpers.js";

const settings = readTestSettings(process.env);

let store: Awaited<ReturnType<typeof openTestStore>>;
before(async () => {
  store = await openTestStore(settings);
});
after(() => store.close());

test("pages are keyset-ordered by creation and stable while rows are added", async () => {
  const now = new Date();
  const make = (id: string) =>
    createEndpoint(
      store.db,
      { tenantId: "t", id, url: "https://x.test", description: "", eventTypes: [], secret: "s" },
      now,
    );
  for (const id of ["z", "a", "m", "b", "y"]) await make(id);
  const first = await listEndpoints(store.db, "t", 2, "");
  assert.deepEqual(
    first.items.map((e) => e.id),
    ["z", "a"],
  );
  await make("c"); // added mid-pagination: shows at the end, shifts nothing
  const second = await listEndpoints(store.db, "t", 2, first.nextPageToken);
  const third = await listEndpoints(store.db, "t", 2, second.nextPageToken);
  assert.deepEqual(
    [...second.items, ...third.items].map((e) => e.id),
    ["m", "b", "y", "c"],
  );
  assert.equal(third.nextPageToken, "");
  await assert.rejects(listEndpoints(store.db, "t", 2, "bm9wZQ"), InvalidPageTokenError);
});

test("a page token is refused by another tenant, another list or other filters, and taken with the same ones", async () => {
  const now = new Date();
  for (const [tenantId, id] of [
    ["bound", "one"],
    ["bound", "two"],
    ["bound", "three"],
    ["other", "one"],
  ] as const) {
    await createEndpoint(
      store.db,
      { tenantId, id, url: "https://x.test", description: "", eventTypes: [], secret: "s" },
      now,
    );
  }
  const first = await listEndpoints(store.db, "bound", 1, "");
  assert.notEqual(first.nextPageToken, "");
  const refused = /page_token was issued for another list or other filters/;
  await assert.rejects(listEndpoints(store.db, "other", 1, first.nextPageToken), refused);
  await assert.rejects(listDeliveries(store.db, { tenantId: "bound" }, 1, first.nextPageToken), refused);
  assert.deepEqual(
    (await listEndpoints(store.db, "bound", 5, first.nextPageToken)).items.map((e) => e.id),
    ["two", "three"],
    "the same list goes on, whatever the page size",
  );

  await emitEvents(
    store.db,
    ["e1", "e2", "e3"].map((id) => ({ tenantId: "bound", id, eventType: "x", dataJson: "{}" })),
    now,
  );
  const pending = await listDeliveries(store.db, { tenantId: "bound", status: "pending" }, 2, "");
  assert.notEqual(pending.nextPageToken, "");
  await assert.rejects(
    listDeliveries(store.db, { tenantId: "bound", status: "failed" }, 2, pending.nextPageToken),
    refused,
  );
  // An empty filter lists what an unset one does: the token is theirs alike.
  const same = await listDeliveries(
    store.db,
    { tenantId: "bound", status: "pending", eventId: "" },
    100,
    pending.nextPageToken,
  );
  assert.equal(pending.items.length + same.items.length, 9, "three events to three endpoints");
  // A token without its list's digest (made up, or from before tokens carried it) is no position.
  const legacy = Buffer.from("k1.0").toString("base64url");
  await assert.rejects(
    listDeliveries(store.db, { tenantId: "bound" }, 100, legacy),
    /page_token is not a token/,
  );
});
