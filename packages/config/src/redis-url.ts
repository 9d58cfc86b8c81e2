/** What a REDIS_URL says, in the shape ioredis takes as options. */
export interface RedisOptions {
  host: string;
  port: number;
  username?: string;
  password?: string;
  db: number;
  tls?: { servername?: string };
}

/** Reads every field of a redis:// or rediss:// URL: user, password, database number and TLS. */
export function parseRedisUrl(text: string): RedisOptions {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error("is not a URL (expected redis://[user:password@]host[:port][/db])");
  }
  if (url.protocol !== "redis:" && url.protocol !== "rediss:") {
    throw new Error(`has scheme ${url.protocol} (expected redis: or rediss:)`);
  }
  const dbText = url.pathname.replace(/^\//, "") || url.searchParams.get("db") || "0";
  const db = Number(dbText);
  // Not quoted: a '/' left unencoded in the password ends the host there, and the rest of the
  // password would be read, and echoed, as the database.
  if (!Number.isInteger(db) || db < 0) {
    throw new Error(
      "has a database that is not a number (expected /0, /1, …; write a '/' in the password as %2F)",
    );
  }
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1") || "127.0.0.1";
  const options: RedisOptions = { host, port: url.port ? Number(url.port) : 6379, db };
  if (url.username) options.username = decodeURIComponent(url.username);
  if (url.password) options.password = decodeURIComponent(url.password);
  if (url.protocol === "rediss:") options.tls = { servername: host };
  return options;
}
