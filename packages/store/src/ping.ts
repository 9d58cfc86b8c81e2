import { type Kysely, sql } from "kysely";
import type { Database } from "./schema.js";

/** True when the store answers a trivial query now; callers bound how long they wait. */
export function ping(db: Kysely<Database>): Promise<boolean> {
  return sql`select 1`.execute(db).then(
    () => true,
    () => false,
  );
}
