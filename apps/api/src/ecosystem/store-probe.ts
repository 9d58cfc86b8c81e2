import type { Database } from "@hookline/store";
import { type Kysely, sql } from "kysely";

/** True when the store answers a trivial query; the health monitor bounds how long it may take. */
export function storeAnswers(db: Kysely<Database>): Promise<boolean> {
  return sql`select 1`.execute(db).then(
    () => true,
    () => false,
  );
}
