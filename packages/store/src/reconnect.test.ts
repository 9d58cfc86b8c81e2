import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { eventually, readTestSettings, startDatabaseProxy } from "@hookline/testkit";
import { sql } from "kysely";
import { connectStore, type StoreConnection } from "./index.js";
import { listen, notify } from "./pg-plumbing/index.js";
import { openTestStore } from "./test-helpers.js";

const settings = readTestSettings(process.env);

let store: Awaited<ReturnType<typeof openTestStore>>;
before(async () => {
  store = await openTestStore(settings);
});
after(async () => {
  await store?.close();
});

test("a listener comes back by itself after the database was away for seconds", {
  skip:
    settings.kind === "embedded" &&
    "embedded PGlite signals in process (no NOTIFY across connections); covered by the servers run",
}, async () => {
  const { proxy, config } = await startDatabaseProxy(store.pgConfig);
  const received: string[] = [];
  const errors: Error[] = [];
  const listener = await listen(
    config,
    "hookline_test",
    (payload) => received.push(payload),
    (error) => {
      errors.push(error);
    },
  );
  try {
    await notify(store.db, "hookline_test", "before");
    await eventually(
      async () => received,
      (r) => r.includes("before"),
    );
    proxy.cut();
    // Longer than one retry: the listener must keep trying, not give up after the first refusal.
    await eventually(
      async () => errors.length,
      (n) => n >= 3,
      { timeoutMs: 10_000 },
    );
    proxy.restore();
    // It cannot know what it missed, so it says so (an empty payload) and then hears new signals.
    await eventually(
      async () => {
        await notify(store.db, "hookline_test", "after");
        return received;
      },
      (r) => r.includes("after"),
      { everyMs: 200 },
    );
    assert.ok(received.lastIndexOf("") > received.indexOf("before"), "a reconnect is announced");
  } finally {
    await listener.close();
    await proxy.close();
  }
});

test("losing the database mid-transaction fails the transaction, not the process", async () => {
  const { proxy, config } = await startDatabaseProxy(store.pgConfig);
  const errors: Error[] = [];
  let through: StoreConnection | undefined;
  try {
    through = await connectStore(
      { databaseUrl: String(config.connectionString) },
      {
        onError: (error) => errors.push(error),
      },
    );
    const db = through.db;
    const transaction = db.transaction().execute(async (trx) => {
      await sql`select 1`.execute(trx);
      proxy.cut();
      // The connection is checked out and idle between statements when it drops.
      await eventually(
        async () => errors.length,
        (n) => n > 0,
      );
      await sql`select 1`.execute(trx);
    });
    await assert.rejects(transaction);
    // The abandoned transaction is rolled back: other connections (on embedded PGlite, the one
    // session every connection shares) go on answering.
    const { rows } = await sql<{ one: number }>`select 1 as one`.execute(store.db);
    assert.deepEqual(rows, [{ one: 1 }]);
    proxy.restore();
    const answer = await eventually(
      () =>
        sql<{ one: number }>`select 1 as one`.execute(db).then(
          (r) => r.rows[0]?.one,
          () => undefined,
        ),
      (one) => one === 1,
    );
    assert.equal(answer, 1);
  } finally {
    await through?.close();
    await proxy.close();
  }
});
