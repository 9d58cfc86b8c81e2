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
  // Stands for a statement that takes long, as a fan-out to thousands of endpoints does.
  await sql`
    create function hookline.slow_down() returns trigger language plpgsql as $$
    begin
      if new.id = 'slow' then perform pg_sleep(2); end if;
      return new;
    end $$`.execute(store.db);
  await sql`create trigger slow_down before insert on hookline.events
            for each row execute function hookline.slow_down()`.execute(store.db);
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

test("an Emit whose statement runs long does not hold back the Emits after it", {
  skip:
    settings.kind === "embedded" && "the embedded store runs one statement at a time whatever the api sends",
}, async () => {
  const emit = createEmitBatcher(store.db, () => new Date());
  const finished: string[] = [];
  const call = (id: string) =>
    emit({ tenantId: "t", id, eventType: "x", dataJson: "{}" }).then(() => finished.push(id));
  const slow = call("slow");
  // Made while the slow statement runs: it waits for that statement's place, not its end.
  await new Promise((resolve) => setImmediate(resolve));
  const quick = call("quick");
  await Promise.all([slow, quick]);
  assert.deepEqual(finished, ["quick", "slow"]);
});
