import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { eventually, readTestSettings } from "@hookline/testkit";
import { sql } from "kysely";
import pg from "pg";
import { createEndpoint, emitEvent, recordAttempts } from "./index.js";
import { openTestStore } from "./test-helpers.js";

const settings = readTestSettings(process.env);
const embeddedOnly = {
  skip: settings.kind !== "embedded" && "on a real server each connection is a session of its own",
};

let store: Awaited<ReturnType<typeof openTestStore>>;
before(async () => {
  store = await openTestStore(settings);
});
after(() => store.close());

/** A pg connection of its own to the store's database (on embedded, another client of its one session). */
async function connection(): Promise<pg.Client> {
  const client = new pg.Client(store.pgConfig);
  await client.connect();
  return client;
}

/** The session's prepared statements whose name ends with `suffix`. */
async function preparedEndingWith(suffix: string): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`select name from pg_prepared_statements`.execute(store.db);
  return rows.map((row) => row.name).filter((name) => name.endsWith(suffix));
}

test(
  "two connections may prepare statements of the same name, each its own, as on a server",
  embeddedOnly,
  async () => {
    const [one, two] = [await connection(), await connection()];
    try {
      const ask = async (client: pg.Client, text: string) =>
        (await client.query<{ n: number }>({ name: "same_name", text })).rows[0]?.n;
      assert.equal(await ask(one, "select 1 as n"), 1);
      // Embedded PGlite is one session: before each connection had names of its own, this Parse
      // failed ("prepared statement already exists"), or ran the other connection's statement.
      assert.equal(await ask(two, "select 2 as n"), 2);
      assert.equal(await ask(one, "select 1 as n"), 1, "the first connection still runs its own");
    } finally {
      await Promise.all([one.end(), two.end()]);
    }
  },
);

test("a connection's prepared statements go when it disconnects", embeddedOnly, async () => {
  const client = await connection();
  await client.query({ name: "left_behind", text: "select 1" });
  assert.equal((await preparedEndingWith("left_behind")).length, 1);
  await client.end();
  // One session outlives every connection: what they prepared would pile up in it.
  await eventually(
    () => preparedEndingWith("left_behind"),
    (names) => names.length === 0,
  );
});

test("the embedded store plans Emit and attempt records once per connection", embeddedOnly, async () => {
  const now = new Date();
  await createEndpoint(
    store.db,
    { tenantId: "prep", id: "ep", url: "https://x.test", description: "", eventTypes: [], secret: "s" },
    now,
  );
  // Parsing and planning these in WebAssembly took most of each call's time on PGlite's one session.
  for (let i = 0; i < 3; i++) {
    const { deliveries } = await emitEvent(
      store.db,
      { tenantId: "prep", id: `ev-${i}`, eventType: "t", dataJson: "{}" },
      now,
    );
    const [recorded] = await recordAttempts(
      store.db,
      [
        {
          deliveryId: deliveries[0]?.id ?? "",
          attemptNumber: 1,
          url: "https://x.test",
          startedAt: now,
          durationMs: 3,
          responseStatus: 200,
          responseBody: "",
          error: "",
          deliveryStatus: "delivered",
          nextAttemptAt: null,
        },
      ],
      now,
    );
    assert.equal(recorded?.deliveryStatus, "delivered", `event ${i} was recorded delivered`);
  }
  assert.ok((await preparedEndingWith("/emit_events")).length >= 1, "Emit runs a prepared statement");
  assert.ok((await preparedEndingWith("/record_attempts")).length >= 1, "records run a prepared statement");
});
