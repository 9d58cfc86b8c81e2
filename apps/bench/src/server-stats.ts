import net from "node:net";
import pg from "pg";

// Server-side counters for the servers backend: how much PostgreSQL and Redis work one delivery
// costs. PostgreSQL's are per database (the run's own); Redis's are for the whole server, so other
// clients of the same Redis count too.

export type Counters = Map<string, number>;

const PG_COLUMNS = [
  "xact_commit",
  "xact_rollback",
  "tup_returned",
  "tup_fetched",
  "tup_inserted",
  "tup_updated",
  "tup_deleted",
];

/**
 * The database's transaction and row counters (pg_stat_database), and per table the rows read by
 * sequential scans ("seq:<schema.table>") and per index the entries its scans read ("idx:<schema.index>").
 */
export async function postgresCounters(databaseUrl: string): Promise<Counters> {
  const name = new URL(databaseUrl).pathname.slice(1);
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const database = await client.query<Record<string, string>>(
      `select ${PG_COLUMNS.join(", ")} from pg_stat_database where datname = $1`,
      [name],
    );
    const counters: Counters = new Map(
      PG_COLUMNS.map((column) => [column, Number(database.rows[0]?.[column] ?? 0)]),
    );
    const tables = await client.query<{ name: string; seq: string }>(
      `select schemaname || '.' || relname as name, seq_tup_read as seq from pg_stat_user_tables`,
    );
    for (const row of tables.rows) counters.set(`seq:${row.name}`, Number(row.seq));
    const indexes = await client.query<{ name: string; read: string }>(
      `select schemaname || '.' || indexrelname as name, idx_tup_read as read from pg_stat_user_indexes`,
    );
    for (const row of indexes.rows) counters.set(`idx:${row.name}`, Number(row.read));
    return counters;
  } finally {
    await client.end();
  }
}

/** Calls per Redis command (INFO commandstats), plus "total". */
export async function redisCounters(host: string, port: number): Promise<Counters> {
  const text = await redisInfo(host, port, "commandstats");
  const counters: Counters = new Map();
  let total = 0;
  for (const match of text.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    const calls = Number(match[2]);
    counters.set(match[1] ?? "?", calls);
    total += calls;
  }
  counters.set("total", total);
  return counters;
}

/** after - before, per counter. */
export function difference(before: Counters, after: Counters): Counters {
  return new Map([...after].map(([name, value]) => [name, value - (before.get(name) ?? 0)]));
}

/** A few lines per server: its counters divided by the number of deliveries. */
export function perDeliveryText(postgres: Counters, redis: Counters, deliveries: number): string {
  const per = (n: number) => (n / deliveries).toFixed(2);
  const top = (counters: Counters, keep: (name: string) => boolean, count = 6) =>
    [...counters]
      .filter(([name, n]) => keep(name) && n > 0)
      .sort((a, b) => b[1] - a[1])
      .slice(0, count)
      .map(([name, n]) => `${name.replace(/^(seq|idx):/, "")} ${per(n)}`)
      .join(", ");
  return [
    `  PostgreSQL (this database) per delivery: ${top(postgres, (name) => !name.includes(":"), 10)}`,
    `    rows read by sequential scans: ${top(postgres, (name) => name.startsWith("seq:")) || "none"}`,
    `    index entries read, by index: ${top(postgres, (name) => name.startsWith("idx:")) || "none"}`,
    `  Redis (whole server) commands per delivery: ${per(redis.get("total") ?? 0)} (${top(redis, (name) => name !== "total")})`,
  ].join("\n");
}

function redisInfo(host: string, port: number, section: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host, port });
    let reply = "";
    socket.setTimeout(5_000, () => socket.destroy(new Error("Redis did not answer INFO within 5 s")));
    socket.once("error", reject);
    socket.on("data", (chunk: Buffer) => {
      reply += chunk.toString();
      const header = /^\$(\d+)\r\n/.exec(reply);
      if (reply.startsWith("-")) socket.destroy(new Error(`Redis refused INFO: ${reply.trim()}`));
      else if (header?.[1] && Buffer.byteLength(reply) >= header[0].length + Number(header[1])) {
        socket.end();
        resolve(reply.slice(header[0].length));
      }
    });
    socket.write(`INFO ${section}\r\n`);
  });
}
