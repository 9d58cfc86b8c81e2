import { type PostgresPool, type PostgresPoolClient, type RawBuilder, sql } from "kysely";
import type pg from "pg";

/**
 * Ends a statement whose text never changes (its values are all parameters), so that on embedded
 * PGlite it runs as a named prepared statement (see preparingPool): parsed and planned once per
 * connection, not on every call.
 */
export function preparedAs(name: string): RawBuilder<unknown> {
  return sql.raw(`${MARK}${name} */`);
}

const MARK = "/* prepared as ";

/**
 * The embedded store's pool: a statement that ends with preparedAs's mark goes to pg with that
 * name, the rest as they are. PGlite parses and plans in WebAssembly, on the one session every
 * statement waits for: recording one attempt took 3.2 ms of it as an unnamed statement and 0.9
 * ms prepared (the plan PostgreSQL then keeps, probing deliveries by primary key, held at 42,000
 * deliveries as at 50). Not on a real server, where planning costs a fraction of that.
 */
export function preparingPool(pool: pg.Pool): PostgresPool {
  return {
    async connect(): Promise<PostgresPoolClient> {
      const client = await pool.connect();
      const query = (text: string, values: unknown[]) => {
        const name = preparedName(text);
        return name === undefined ? client.query(text, values) : client.query({ name, text, values });
      };
      return {
        // Kysely calls the cursor overload only for streamed queries, with a cursor configured: none here.
        query: query as unknown as PostgresPoolClient["query"],
        release: (destroy?: boolean) => client.release(destroy === true),
      };
    },
    end: () => pool.end(),
  };
}

/** The name a statement's mark gives it, if it ends with one. */
function preparedName(text: string): string | undefined {
  if (!text.endsWith(" */")) return undefined;
  const at = text.lastIndexOf(MARK);
  return at < 0 ? undefined : text.slice(at + MARK.length, -3);
}
