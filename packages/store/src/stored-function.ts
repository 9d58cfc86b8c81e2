import { createHash } from "node:crypto";
import {
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type RawBuilder,
  sql,
} from "kysely";
import { LOCK_KEYS } from "./pg-plumbing/locks.js";
import { STORE_SCHEMA } from "./schema.js";

/**
 * One statement kept in the database as a plpgsql function. PostgreSQL keeps a function's
 * statement parsed and planned for the session: every call runs the one plan made for any values
 * (the generic plan), skipping the parse, analysis and planning that sending the text costs every
 * time: on embedded PGlite most of their work (one attempt recorded in 0.75 ms rather than 1.7,
 * one event emitted in 0.7 rather than 1.4), on real PostgreSQL about half of a call's time. A
 * plan kept from when a table was small would read the grown table whole, a sequential scan being
 * the cheapest way then, until the next analyse: sequential scans are therefore made the last
 * resort for the function's statement, so that the plan reads the rows it needs through the
 * indexes of their keys whatever the statistics said when it was made (stored-function.test.ts
 * counts the rows of deliveries, endpoints and events read after the tables grew). Both settings
 * apply to the function alone, not to the session's other statements.
 *
 * The name carries a hash of the definition, so the database can never hold a different body
 * under the name the code calls; processes of two versions running side by side (a rolling
 * deploy) each call their own.
 */
export interface StoredFunction {
  /** Its name before the hash: every version of the statement shares it. */
  readonly base: string;
  /** Its name in the store's schema. */
  readonly name: string;
  /** The schema-qualified name, to call it by. */
  readonly qualified: RawBuilder<unknown>;
  /** The CREATE FUNCTION statement. */
  readonly definition: string;
}

export interface StoredFunctionSpec {
  /** The function's name before its hash. */
  base: string;
  /** Parameters in call order: name (referenced as such in the body) and type. */
  params: readonly (readonly [string, string])[];
  /** The result columns, as in RETURNS TABLE (...). */
  returns: string;
  /** The statement: its values are the parameters (sql.ref) and literals (sql.lit), never bound. */
  body: RawBuilder<unknown>;
}

// Compiles SQL text without a database, for definitions built at load.
const compiler = new Kysely<unknown>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
});

export function storedFunction(spec: StoredFunctionSpec): StoredFunction {
  // Also a pattern in dropSupersededFunctions: letters, digits and underscores only.
  if (!/^[a-z][a-z0-9_]*$/.test(spec.base)) throw new Error(`${spec.base}: not a plain lowercase name`);
  const compiled = spec.body.compile(compiler);
  if (compiled.parameters.length > 0) {
    throw new Error(`${spec.base}: a stored function's body binds no values (use sql.ref or sql.lit)`);
  }
  if (compiled.sql.includes("$body$"))
    throw new Error(`${spec.base}: the body must not contain $body$, its quote`);
  const params = spec.params.map(([name, type]) => `${name} ${type}`).join(", ");
  // use_column: the result columns' names are also the tables' column names the body reads.
  const rest = `(${params})
  returns table (${spec.returns})
  language plpgsql
  set plan_cache_mode = force_generic_plan
  set enable_seqscan = off
  as $body$
#variable_conflict use_column
begin
  return query ${compiled.sql};
end
$body$`;
  const hash = createHash("sha256").update(rest).digest("hex").slice(0, 16);
  const name = `${spec.base}_${hash}`;
  const qualified = `${STORE_SCHEMA}.${name}`;
  return {
    base: spec.base,
    name,
    qualified: sql.raw(qualified),
    definition: `create function ${qualified}${rest}`,
  };
}

/**
 * Creates the functions the database lacks. Under a transaction lock, so that processes starting
 * at once do not race on the catalog; a function already there is left untouched (no catalog
 * write, no plan invalidated in the sessions using it). Read committed whatever the database's
 * default: the check must see a function another process created while this one waited for the
 * lock, which a snapshot taken at the lock's statement would not.
 */
export async function ensureStoredFunctions(
  db: Kysely<unknown>,
  functions: readonly StoredFunction[],
): Promise<void> {
  await db
    .transaction()
    .setIsolationLevel("read committed")
    .execute(async (tx) => {
      await sql`select pg_advisory_xact_lock(${LOCK_KEYS.storedFunctions})`.execute(tx);
      for (const fn of functions) {
        const { rows } = await sql<{ found: boolean }>`
        select exists (
          select 1 from pg_proc p join pg_namespace n on n.oid = p.pronamespace
           where n.nspname = ${STORE_SCHEMA} and p.proname = ${fn.name}
        ) as found`.execute(tx);
        if (rows[0]?.found) continue;
        // Asked before the CREATE: a refused one aborts the transaction.
        const { rows: who } = await sql<{ role: string }>`select current_user as role`.execute(tx);
        try {
          await sql.raw(fn.definition).execute(tx);
        } catch (error) {
          if ((error as { code?: string }).code === INSUFFICIENT_PRIVILEGE)
            throw new StoredFunctionPrivilegeError(fn.name, who[0]?.role, error as Error);
          throw error;
        }
      }
    });
}

const INSUFFICIENT_PRIVILEGE = "42501";

/**
 * Drops the versions of these functions that an earlier Hookline created (the same base, another
 * hash). Only for a database no process of another version can be
 * using: on a shared PostgreSQL a rolling deploy's older processes still call theirs. A function
 * that cannot be dropped (something of the user's depends on it) stays: this is only tidying, and
 * must not stop a start. A base a later version retires would need listing here to go too.
 */
export async function dropSupersededFunctions(
  db: Kysely<unknown>,
  functions: readonly StoredFunction[],
): Promise<void> {
  const versionOf = `^(${functions.map((fn) => fn.base).join("|")})_[0-9a-f]{16}$`;
  const { rows } = await sql<{ signature: string }>`
    select format('%I.%I(%s)', n.nspname, p.proname, pg_get_function_identity_arguments(p.oid)) as signature
      from pg_proc p join pg_namespace n on n.oid = p.pronamespace
     where n.nspname = ${STORE_SCHEMA} and p.proname ~ ${versionOf}
       and p.proname <> all(${functions.map((fn) => fn.name)}::text[])`.execute(db);
  // The signature comes from the catalog, quoted by format's %I.
  for (const { signature } of rows)
    await sql
      .raw(`drop function if exists ${signature}`)
      .execute(db)
      .catch(() => {});
}

/**
 * The store's role may not create a stored function this version needs (a new version's
 * functions have new names, see StoredFunction): the process stops, saying what to grant.
 */
export class StoredFunctionPrivilegeError extends Error {
  constructor(
    readonly functionName: string,
    /** The role the store connects as (current_user), when it could be read. */
    readonly role: string | undefined,
    cause: Error,
  ) {
    const grantee = role === undefined ? "<the store's role>" : `"${role.replaceAll('"', '""')}"`;
    super(
      `the store's database role may not create the function ${STORE_SCHEMA}.${functionName}, which ` +
        `this version of Hookline calls (PostgreSQL: ${cause.message}): grant it with GRANT CREATE ON ` +
        `SCHEMA ${STORE_SCHEMA} TO ${grantee}, or start this version once with the schema owner's role`,
      { cause },
    );
    this.name = "StoredFunctionPrivilegeError";
  }
}
