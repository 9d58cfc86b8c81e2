import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type CuttableProxy, eventually, readTestSettings, startDatabaseProxy } from "@hookline/testkit";
import { sql } from "kysely";
import { connectStore, DatabaseTimeoutError, isConnectionError, type StoreConnection } from "./index.js";
import { listen } from "./pg-plumbing/index.js";
import { openTestStore } from "./test-helpers.js";

const settings = readTestSettings(process.env);
const TIMEOUT_MS = 1000;
// Without the timeouts, these calls wait for TCP (minutes): fail instead.
const UNLESS_STUCK = { timeout: 15_000 };

// A PostgreSQL that stops answering with its connections still open: a failover to another host, a
// partition. The proxy's freeze holds every byte; before these timeouts, each call waited for TCP.
describe("a database that stops answering", {
  skip:
    settings.kind === "embedded" &&
    "embedded PGlite is this process's own thread on a local socket, and its statements are not timed",
}, () => {
  let store: Awaited<ReturnType<typeof openTestStore>>;
  let proxy: CuttableProxy;
  let through: StoreConnection;
  before(async () => {
    store = await openTestStore(settings);
    const relayed = await startDatabaseProxy(store.pgConfig);
    proxy = relayed.proxy;
    through = await connectStore(
      { databaseUrl: String(relayed.config.connectionString) },
      { timeoutMs: TIMEOUT_MS, onError: () => {} },
    );
  });
  after(async () => {
    proxy?.thaw();
    await through?.close();
    await proxy?.close();
    await store?.close();
  });

  async function timedOut(statement: Promise<unknown>): Promise<{ error: unknown; ms: number }> {
    const started = performance.now();
    const error = await statement.then(
      () => assert.fail("the statement was answered"),
      (error: unknown) => error,
    );
    return { error, ms: performance.now() - started };
  }

  test(
    "fails a statement on an open connection, then the next connect, each within its bound; the store answers again once it does",
    UNLESS_STUCK,
    async () => {
      await sql`select 1`.execute(through.db); // one pooled connection, open
      proxy.freeze();
      try {
        const sent = await timedOut(sql`select 1`.execute(through.db));
        assert.ok(sent.error instanceof DatabaseTimeoutError, String(sent.error));
        assert.match(sent.error.message, /did not answer within 2000 ms/);
        assert.ok(isConnectionError(sent.error), "the api answers it UNAVAILABLE");
        assert.ok(sent.ms >= 1900 && sent.ms < 6000, `gave up after ${Math.round(sent.ms)} ms`);
        // That connection still owes an answer: it left the pool, and the next call connects afresh.
        const connecting = await timedOut(sql`select 1`.execute(through.db));
        assert.ok(connecting.error instanceof DatabaseTimeoutError, String(connecting.error));
        assert.match(
          connecting.error.message,
          /no database connection opened, or free in the pool, within 1000 ms/,
        );
        assert.ok(connecting.ms < 4000, `gave up after ${Math.round(connecting.ms)} ms`);
      } finally {
        proxy.thaw();
      }
      const { rows } = await sql<{ n: number }>`select 3 as n`.execute(through.db);
      assert.deepEqual(rows, [{ n: 3 }]);
    },
  );

  test(
    "a process that opens the store while the database does not answer stops within the connect bound",
    UNLESS_STUCK,
    async () => {
      const relayed = await startDatabaseProxy(store.pgConfig);
      relayed.proxy.freeze();
      try {
        const started = performance.now();
        await assert.rejects(
          connectStore({ databaseUrl: String(relayed.config.connectionString) }, { timeoutMs: TIMEOUT_MS }),
          (error) => isConnectionError(error),
        );
        const ms = performance.now() - started;
        assert.ok(ms < 4000, `gave up after ${Math.round(ms)} ms`);
      } finally {
        relayed.proxy.thaw();
        await relayed.proxy.close();
      }
    },
  );

  test(
    "the server ends a statement that runs past the timeout itself, and the connection stays",
    UNLESS_STUCK,
    async () => {
      const pidOf = async () =>
        (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(through.db)).rows[0]?.pid;
      const pid = await pidOf();
      const slow = await timedOut(sql`select pg_sleep(5)`.execute(through.db));
      assert.equal((slow.error as { code?: string }).code, "57014", String(slow.error));
      assert.ok(isConnectionError(slow.error), "the api answers it UNAVAILABLE");
      assert.ok(
        slow.ms < 2000,
        `the server cancelled it, before the client's timeout: ${Math.round(slow.ms)} ms`,
      );
      assert.equal(await pidOf(), pid, "no reconnect");
    },
  );

  test(
    "a transaction whose client stopped answering is rolled back by the server, and its locks go",
    UNLESS_STUCK,
    async () => {
      const key = 0x7e57_0001;
      let locked!: () => void;
      const holding = new Promise<void>((resolve) => {
        locked = resolve;
      });
      const transaction = through.db.transaction().execute(async (trx) => {
        await sql`select pg_advisory_xact_lock(${key})`.execute(trx);
        proxy.freeze();
        locked();
        await sql`select 1`.execute(trx);
      });
      try {
        await holding;
        // Another process, straight to the database: it gets the lock once the server has ended
        // the idle transaction, not when TCP notices the client is gone.
        const started = performance.now();
        const { rows } = await sql<{ got: boolean }>`select pg_try_advisory_xact_lock(${key}) as got`.execute(
          store.db,
        );
        assert.deepEqual(rows, [{ got: false }], "held while the transaction is open");
        const got = await eventually(
          async () =>
            (await sql<{ got: boolean }>`select pg_try_advisory_xact_lock(${key}) as got`.execute(store.db))
              .rows[0]?.got,
          (got) => got === true,
          { timeoutMs: 10_000, everyMs: 50 },
        );
        assert.equal(got, true);
        const ms = performance.now() - started;
        assert.ok(ms < 6000, `the lock went after ${Math.round(ms)} ms`);
        await assert.rejects(transaction, (error) => isConnectionError(error));
      } finally {
        proxy.thaw();
        await transaction.catch(() => {});
      }
    },
  );

  test(
    "a listener asks for a heartbeat, reconnects when none comes, and hears signals again",
    UNLESS_STUCK,
    async () => {
      const received: string[] = [];
      let heartbeatMissed!: () => void;
      const missed = new Promise<void>((resolve) => {
        heartbeatMissed = resolve;
      });
      const listener = await listen(
        through.pgConfig,
        "hookline_frozen",
        (payload) => received.push(payload),
        (error) => {
          if (/no answer to a heartbeat/.test(error.message)) heartbeatMissed();
        },
        500,
      );
      try {
        received.length = 0; // the first connection's announcement
        proxy.freeze();
        await missed;
        proxy.thaw();
        // A reconnect says it may have missed signals (""), then hears new ones.
        await eventually(
          async () => {
            await sql`select pg_notify('hookline_frozen', 'after')`.execute(store.db);
            return received;
          },
          (seen) => seen.includes("after"),
          { everyMs: 100 },
        );
        assert.ok(received.includes(""), "the reconnect is announced");
      } finally {
        proxy.thaw();
        await listener.close();
      }
    },
  );
});
