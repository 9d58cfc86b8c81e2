import { randomBytes } from "node:crypto";
import type pg from "pg";

// The reference design's rows: what a team would write first with PostgreSQL and BullMQ. Plain
// tables, primary keys only; the worker reads one delivery by id, so no other index is needed.
// No foreign keys either: Hookline's schema has none, and each would cost every delivery insert
// a lookup (and a row lock) in the table it references, PostgreSQL work Hookline does not do.

const DDL = `
  create table endpoints (id text primary key, url text not null, secret text not null);
  create table events (id text primary key, type text not null, data text not null,
    created_at timestamptz not null default now());
  create table deliveries (id text primary key, event_id text not null, endpoint_id text not null,
    status text not null, attempts int not null default 0);
  create table attempts (id bigserial primary key, delivery_id text not null, number int not null,
    started_at timestamptz not null, duration_ms int not null, status_code int, error text);
`;

/** Creates the tables and `count` endpoints pointing at `${url}/${i}`; resolves to their ids. */
export async function createReferenceSchema(pool: pg.Pool, url: string, count: number): Promise<string[]> {
  await pool.query(DDL);
  const ids = Array.from({ length: count }, (_, i) => `ep-${i}`);
  for (const [i, id] of ids.entries()) {
    const secret = `whsec_${randomBytes(24).toString("base64")}`;
    await pool.query("insert into endpoints (id, url, secret) values ($1, $2, $3)", [
      id,
      `${url}/${i}`,
      secret,
    ]);
  }
  return ids;
}

/** Deliveries not yet delivered or failed. */
export async function pendingReferenceDeliveries(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query<{ n: string }>(
    "select count(*) as n from deliveries where status = 'pending'",
  );
  return Number(rows[0]?.n ?? 0);
}
