import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { readTestSettings } from "@hookline/testkit";
import { createEndpoint, InvalidPageTokenError, listEndpoints } from "./index.js";
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
