import { after, before } from "node:test";
import { createTestBackend, eventually, type TestBackend, type TestSettings } from "@hookline/testkit";
import { type Kysely, sql } from "kysely";
import type { AttemptResult } from "./attempts.js";
import { connectStore, type StoreConnection } from "./connect.js";
import type { Database } from "./schema.js";

/** Opens a fresh store on the backend this run tests; close() also drops it. */
export async function openTestStore(
  settings: TestSettings,
): Promise<StoreConnection & { backend: TestBackend }> {
  const backend = await createTestBackend(settings);
  const store = await connectStore(
    backend.databaseUrl ? { databaseUrl: backend.databaseUrl } : { dataDir: null },
  );
  return {
    ...store,
    backend,
    db: store.db,
    async close() {
      await store.close();
      await backend.dispose();
    },
  };
}

/** A fresh store opened before this file's tests and dropped after them; read `db` inside a test. */
export function storeForThisFile(settings: TestSettings): { readonly db: Kysely<Database> } {
  let store: Awaited<ReturnType<typeof openTestStore>> | undefined;
  before(async () => {
    store = await openTestStore(settings);
  });
  after(() => store?.close());
  return {
    get db() {
      if (!store) throw new Error("the test store is opened before the file's tests");
      return store.db;
    },
  };
}

/** Resolves once `count` statements in this database wait for locks (ones other sessions hold). */
export async function someoneWaitsForALock(db: Kysely<Database>, count = 1): Promise<void> {
  await eventually(
    async () => {
      const { rows } = await sql<{ n: number }>`
          select count(*)::int as n from pg_stat_activity
           where wait_event_type = 'Lock' and datname = current_database()`.execute(db);
      return rows[0]?.n ?? 0;
    },
    (waiting) => waiting >= count,
  );
}

/** Options for a test of two sessions racing: skipped embedded, where one session runs one transaction at a time. */
export function racing(settings: TestSettings): { skip: string | false } {
  return {
    skip: settings.kind === "embedded" && "one embedded session runs one transaction at a time: no race",
  };
}

/** The first attempt at a delivery, answered 200: it is delivered. */
export function deliveredAttempt(deliveryId: string, startedAt = new Date()): AttemptResult {
  return {
    deliveryId,
    attemptNumber: 1,
    url: "https://x.test",
    startedAt,
    durationMs: 3,
    responseStatus: 200,
    responseBody: "",
    error: "",
    deliveryStatus: "delivered",
    nextAttemptAt: null,
  };
}
