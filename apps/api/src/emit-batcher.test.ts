import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { connectStore, createEndpoint, getEvent, type StoreConnection } from "@hookline/store";
import { createTestBackend, readTestSettings, type TestBackend } from "@hookline/testkit";
import { sql } from "kysely";
import { createEmitBatcher } from "./emit-batcher.js";

const settings = readTestSettings(process.env);

let backend: TestBackend;
let store: StoreConnection;
before(async () => {
  backend = await createTestBackend(settings);
  store = await connectStore(backend.databaseUrl ? { databaseUrl: backend.databaseUrl } : { dataDir: null });
  await createEndpoint(
    store.db,
    { tenantId: "t", id: "ep", url: "https://x.test", description: "", eventTypes: [], secret: "whsec_x" },
    new Date(),
  );
  // A database rule, not a mock: the store refuses one event id, as it might refuse any event.
  await sql`
    create function hookline.refuse_poison() returns trigger language plpgsql as $$
    begin
      if new.id = 'poison' then raise exception 'refused by the test'; end if;
      return new;
    end $$`.execute(store.db);
  await sql`create trigger refuse_poison before insert on hookline.events
            for each row execute function hookline.refuse_poison()`.execute(store.db);
});
after(async () => {
  await store?.close();
  await backend?.dispose();
});

test("concurrent Emits share transactions, and an event the store refuses fails only its own call", async () => {
  const emit = createEmitBatcher(store.db, () => new Date());
  const ids = Array.from({ length: 40 }, (_, i) => (i === 17 ? "poison" : `e${i}`));
  const outcomes = await Promise.allSettled(
    ids.map((id) => emit({ tenantId: "t", id, eventType: "x", dataJson: "{}" })),
  );
  const failed = ids.filter((_, i) => outcomes[i]?.status === "rejected");
  assert.deepEqual(failed, ["poison"]);
  for (const id of ids.filter((id) => id !== "poison")) {
    const { deliveries } = await getEvent(store.db, "t", id);
    assert.deepEqual(
      deliveries.map((d) => d.endpointId),
      ["ep"],
      `${id} has its delivery`,
    );
  }
  await assert.rejects(getEvent(store.db, "t", "poison"), /not found/);
});
