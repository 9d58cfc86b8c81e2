import { type Kysely, type Migration, type MigrationProvider, Migrator, sql } from "kysely";
import { RECORD_ATTEMPTS } from "./attempts.js";
import { LOAD_DELIVERY_WORK } from "./delivery-work.js";
import { EMIT_EVENTS } from "./emit.js";
import { isLockTimeout, isUniqueViolation, MigrationLockTimeoutError } from "./errors.js";
import { STORE_SCHEMA } from "./schema.js";
import { dropSupersededFunctions, ensureStoredFunctions } from "./stored-function.js";

/**
 * How long a migration waits for a table lock. A schema change waiting behind a long transaction
 * makes every later query on that table wait behind it in turn, so the running service would
 * stall for as long as that transaction lasts: better that the starting process fail, change
 * nothing and say why.
 */
const MIGRATION_LOCK_TIMEOUT_MS = 5_000;

/** The statements this version keeps as functions (see storedFunction), created after the migrations. */
export const STORED_FUNCTIONS = [EMIT_EVENTS, RECORD_ATTEMPTS, LOAD_DELIVERY_WORK] as const;

// Versioned migrations, in order. Never edit a published one: add the next.
const migrations: Record<string, Migration> = {
  "0001_initial": {
    async up(db: Kysely<unknown>) {
      const s = db.schema.withSchema(STORE_SCHEMA);
      await s
        .createTable("endpoints")
        .addColumn("tenant_id", "text", (c) => c.notNull())
        .addColumn("id", "text", (c) => c.notNull())
        .addColumn("seq", "bigserial", (c) => c.notNull())
        .addColumn("url", "text", (c) => c.notNull())
        .addColumn("description", "text", (c) => c.notNull().defaultTo(""))
        .addColumn("event_types", sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
        .addColumn("status", "text", (c) => c.notNull())
        .addColumn("disabled_reason", "text", (c) => c.notNull().defaultTo(""))
        .addColumn("secret", "text", (c) => c.notNull())
        .addColumn("created_at", "timestamptz", (c) => c.notNull())
        .addColumn("updated_at", "timestamptz", (c) => c.notNull())
        .addPrimaryKeyConstraint("endpoints_pk", ["tenant_id", "id"])
        .execute();
      await s.createIndex("endpoints_tenant_seq").on("endpoints").columns(["tenant_id", "seq"]).execute();

      await s
        .createTable("events")
        .addColumn("tenant_id", "text", (c) => c.notNull())
        .addColumn("id", "text", (c) => c.notNull())
        .addColumn("seq", "bigserial", (c) => c.notNull())
        .addColumn("event_type", "text", (c) => c.notNull())
        .addColumn("data_json", "text", (c) => c.notNull())
        .addColumn("created_at", "timestamptz", (c) => c.notNull())
        .addPrimaryKeyConstraint("events_pk", ["tenant_id", "id"])
        .execute();

      await s
        .createTable("deliveries")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("seq", "bigserial", (c) => c.notNull())
        .addColumn("tenant_id", "text", (c) => c.notNull())
        .addColumn("event_id", "text", (c) => c.notNull())
        .addColumn("endpoint_id", "text", (c) => c.notNull())
        .addColumn("status", "text", (c) => c.notNull())
        .addColumn("attempt_count", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("next_attempt_at", "timestamptz")
        .addColumn("created_at", "timestamptz", (c) => c.notNull())
        .addColumn("updated_at", "timestamptz", (c) => c.notNull())
        .execute();
      await s.createIndex("deliveries_seq").on("deliveries").column("seq").execute();
      await s.createIndex("deliveries_tenant_seq").on("deliveries").columns(["tenant_id", "seq"]).execute();
      await s.createIndex("deliveries_event").on("deliveries").columns(["tenant_id", "event_id"]).execute();
      await s
        .createIndex("deliveries_endpoint")
        .on("deliveries")
        .columns(["tenant_id", "endpoint_id", "seq"])
        .execute();
      // The sweeper scans only pending rows by due time.
      await s
        .createIndex("deliveries_pending_due")
        .on("deliveries")
        .column("next_attempt_at")
        .where(sql.ref("status"), "=", "pending")
        .execute();

      await s
        .createTable("attempts")
        .addColumn("id", "bigserial", (c) => c.primaryKey())
        .addColumn("tenant_id", "text", (c) => c.notNull())
        .addColumn("delivery_id", "text", (c) => c.notNull())
        .addColumn("event_id", "text", (c) => c.notNull())
        .addColumn("endpoint_id", "text", (c) => c.notNull())
        .addColumn("attempt_number", "integer", (c) => c.notNull())
        .addColumn("started_at", "timestamptz", (c) => c.notNull())
        .addColumn("duration_ms", "integer", (c) => c.notNull())
        .addColumn("response_status", "integer", (c) => c.notNull())
        .addColumn("response_body", "text", (c) => c.notNull())
        .addColumn("error", "text", (c) => c.notNull())
        .addColumn("delivery_status", "text", (c) => c.notNull())
        // One row per (delivery, attempt number), whatever the queue does twice.
        .addUniqueConstraint("attempts_delivery_attempt", ["delivery_id", "attempt_number"])
        .execute();
      await s.createIndex("attempts_tenant_id").on("attempts").columns(["tenant_id", "id"]).execute();
      await s.createIndex("attempts_event").on("attempts").columns(["tenant_id", "event_id", "id"]).execute();
      await s
        .createIndex("attempts_endpoint")
        .on("attempts")
        .columns(["tenant_id", "endpoint_id", "id"])
        .execute();
    },
  },
  "0002_rotation_and_triggers": {
    async up(db: Kysely<unknown>) {
      const s = db.schema.withSchema(STORE_SCHEMA);
      // Secrets retired by a rotation, each still signing until its expires_at.
      await s
        .alterTable("endpoints")
        .addColumn("previous_secrets", "jsonb", (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
        .execute();
      await s
        .alterTable("attempts")
        .addColumn("trigger", "text", (c) => c.notNull().defaultTo("scheduled"))
        .execute();
    },
  },
  "0003_failing_since": {
    async up(db: Kysely<unknown>) {
      // When the endpoint's current run of failed attempts began (null after a success): auto-disable reads it.
      await db.schema
        .withSchema(STORE_SCHEMA)
        .alterTable("endpoints")
        .addColumn("failing_since", "timestamptz")
        .execute();
      await db.schema
        .withSchema(STORE_SCHEMA)
        .createIndex("attempts_started")
        .on("attempts")
        .column("started_at")
        .execute();
      await db.schema
        .withSchema(STORE_SCHEMA)
        .createIndex("events_created")
        .on("events")
        .column("created_at")
        .execute();
    },
  },
  "0004_endpoint_limits_and_demand": {
    async up(db: Kysely<unknown>) {
      const s = db.schema.withSchema(STORE_SCHEMA);
      // Null: the service default (in flight), no limit (rate).
      await s.alterTable("endpoints").addColumn("max_in_flight", "integer").execute();
      await s.alterTable("endpoints").addColumn("rate_limit_per_second", "double precision").execute();
      // Workers find the endpoints with work due by skipping through this index, one probe per
      // endpoint with pending deliveries, however deep its backlog.
      await s
        .createIndex("deliveries_pending_endpoint")
        .on("deliveries")
        .columns(["tenant_id", "endpoint_id", "next_attempt_at"])
        .where(sql.ref("status"), "=", "pending")
        .execute();
    },
  },
  "0005_next_attempt_manual": {
    async up(db: Kysely<unknown>) {
      // Whether the pending attempt was asked for by hand (RetryDelivery, RecoverEndpoint). Kept
      // with the delivery, not only on its job: a job the sweeper has to put back (the api died
      // before queuing it, Redis lost it) is still the one manual attempt, with no new schedule.
      await db.schema
        .withSchema(STORE_SCHEMA)
        .alterTable("deliveries")
        .addColumn("next_attempt_manual", "boolean", (c) => c.notNull().defaultTo(false))
        .execute();
    },
  },
  "0006_delivery_endpoint_seq": {
    // Nullable, no default: a catalog change only, however many deliveries there are.
    async up(db: Kysely<unknown>) {
      await db.schema
        .withSchema(STORE_SCHEMA)
        .alterTable("deliveries")
        .addColumn("endpoint_seq", "bigint")
        .execute();
    },
  },
  "0007_endpoint_secret_since": {
    async up(db: Kysely<unknown>) {
      await db.schema
        .withSchema(STORE_SCHEMA)
        .alterTable("endpoints")
        .addColumn("secret_since", "timestamptz")
        .execute();
    },
  },
  "0008_attempt_url": {
    // Where each attempt was sent: the endpoint's URL may change after. Nullable, no default: a
    // catalog change only, however many attempts are kept; null for those recorded before.
    async up(db: Kysely<unknown>) {
      await db.schema.withSchema(STORE_SCHEMA).alterTable("attempts").addColumn("url", "text").execute();
    },
  },
};

// kysely runs the pending migrations in one transaction, so each sets the timeout for itself.
const provider: MigrationProvider = {
  getMigrations: async () =>
    Object.fromEntries(
      Object.entries(migrations).map(([name, migration]) => [
        name,
        {
          async up(db: Kysely<unknown>) {
            await sql`set local lock_timeout = ${sql.lit(MIGRATION_LOCK_TIMEOUT_MS)}`.execute(db);
            await migration.up(db);
          },
        },
      ]),
    ),
};

export interface MigrateOptions {
  /**
   * No process of another Hookline version can be using this database (the embedded store, which
   * one process holds): the functions earlier versions kept are dropped. On a shared PostgreSQL
   * they stay, since a rolling deploy's older processes still call theirs (see the README).
   */
  soleVersion?: boolean;
}

/**
 * Brings the store schema up to date, then creates the statements kept as functions that it lacks
 * (named by their definition's hash, so they need no migration of their own); safe when several
 * processes start at once (kysely locks, and a lock of ours).
 */
export async function migrate(db: Kysely<unknown>, options: MigrateOptions = {}): Promise<void> {
  // Asked first: CREATE SCHEMA, even IF NOT EXISTS, needs the right to create in the database,
  // which a role that only uses the schema lacks.
  const { rows } = await sql<{ found: boolean }>`
    select exists (select 1 from pg_namespace where nspname = ${STORE_SCHEMA}) as found`.execute(db);
  if (!rows[0]?.found)
    await sql`create schema if not exists ${sql.id(STORE_SCHEMA)}`
      .execute(db)
      .catch(async (error: unknown) => {
        // Two processes creating the schema at once: the loser sees a unique violation; the schema exists.
        if (!isUniqueViolation(error)) throw error;
      });
  const migrator = new Migrator({ db, provider, migrationTableSchema: STORE_SCHEMA });
  const { error, results } = await migrator.migrateToLatest();
  if (error === undefined) {
    await ensureStoredFunctions(db, STORED_FUNCTIONS);
    if (options.soleVersion) await dropSupersededFunctions(db, STORED_FUNCTIONS);
    return;
  }
  const failed = results?.find((result) => result.status === "Error")?.migrationName;
  if (failed !== undefined && isLockTimeout(error)) {
    throw new MigrationLockTimeoutError(failed, MIGRATION_LOCK_TIMEOUT_MS);
  }
  throw error;
}
