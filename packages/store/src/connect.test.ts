import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { chmod, mkdir, mkdtemp, readdir, readFile, readlink, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { createTestBackend, readTestSettings } from "@hookline/testkit";
import { sql } from "kysely";
import pg from "pg";
import {
  connectStore,
  createEndpoint,
  emitEvent,
  getEndpoint,
  MigrationLockTimeoutError,
  recordAttempts,
} from "./index.js";
import { deliveredAttempt } from "./test-helpers.js";

const settings = readTestSettings(process.env);

test("embedded data survives a restart", {
  skip: settings.kind !== "embedded" && "covered by the embedded run",
}, async () => {
  const dir = await mkdtemp(join(tmpdir(), "hookline-store-"));
  try {
    const first = await connectStore({ dataDir: dir });
    await createEndpoint(
      first.db,
      { tenantId: "t", id: "kept", url: "https://x.test", description: "", eventTypes: [], secret: "s" },
      new Date(),
    );
    await first.close();
    const second = await connectStore({ dataDir: dir });
    assert.equal((await getEndpoint(second.db, "t", "kept")).url, "https://x.test");
    await second.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("an embedded store started again drops the stored functions an earlier version kept", {
  skip: settings.kind !== "embedded" && "embedded only: a shared PostgreSQL keeps them",
}, async () => {
  const dir = await mkdtemp(join(tmpdir(), "hookline-store-"));
  // As an upgrade finds it: the version before kept its Emit under another hash.
  const earlier = "emit_events_0123456789abcdef";
  const functionsNamed = async (db: Awaited<ReturnType<typeof connectStore>>["db"], name: string) => {
    const { rows } = await sql<{ n: number }>`
      select count(*)::int as n from pg_proc where proname = ${name}`.execute(db);
    return rows[0]?.n;
  };
  try {
    const first = await connectStore({ dataDir: dir });
    await sql`create function hookline.${sql.raw(earlier)}() returns int language sql as 'select 1'`.execute(
      first.db,
    );
    assert.equal(await functionsNamed(first.db, earlier), 1);
    await first.close();
    const second = await connectStore({ dataDir: dir });
    assert.equal(await functionsNamed(second.db, earlier), 0);
    await second.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("two processes migrating one PostgreSQL database at once both succeed", {
  skip: settings.kind !== "servers" && "needs a real PostgreSQL (the servers run)",
}, async () => {
  const backend = await createTestBackend(settings, "servers");
  try {
    const url = backend.databaseUrl ?? "";
    const stores = await Promise.all([
      connectStore({ databaseUrl: url }),
      connectStore({ databaseUrl: url }),
      connectStore({ databaseUrl: url }),
    ]);
    const [first, , third] = stores;
    assert.ok(first && third);
    await createEndpoint(
      first.db,
      { tenantId: "t", id: "x", url: "https://x.test", description: "", eventTypes: [], secret: "s" },
      new Date(),
    );
    assert.equal((await getEndpoint(third.db, "t", "x")).id, "x");
    // Each start also made sure of the statements the store keeps as functions.
    const { deliveries } = await emitEvent(
      first.db,
      { tenantId: "t", id: "ev", eventType: "order.paid", dataJson: "{}" },
      new Date(),
    );
    const [recorded] = await recordAttempts(
      third.db,
      deliveries.map((d) => deliveredAttempt(d.id)),
      new Date(),
    );
    assert.equal(recorded?.deliveryStatus, "delivered");
    await Promise.all(stores.map((s) => s.close()));
  } finally {
    await backend.dispose();
  }
});

test("a migration that meets a long transaction gives up, changes nothing, and completes on the next start", {
  skip: settings.kind !== "servers" && "needs a real PostgreSQL (the servers run)",
  // Without the lock timeout the migration would wait for as long as the transaction lasts.
  timeout: 60_000,
}, async () => {
  const backend = await createTestBackend(settings, "servers");
  const reader = new pg.Client({ connectionString: backend.databaseUrl });
  try {
    const url = backend.databaseUrl ?? "";
    await (await connectStore({ databaseUrl: url })).close();
    await reader.connect();
    // A database one migration behind (0008 adds attempts.url), then a session that keeps
    // reading attempts in a transaction it has not ended.
    await reader.query("alter table hookline.attempts drop column url");
    await reader.query("delete from hookline.kysely_migration where name = '0008_attempt_url'");
    await reader.query("begin");
    await reader.query("select count(*) from hookline.attempts");

    await assert.rejects(connectStore({ databaseUrl: url }), (error: unknown) => {
      assert.ok(error instanceof MigrationLockTimeoutError, String(error));
      assert.equal(error.migration, "0008_attempt_url");
      assert.match(error.message, /waited 5 s for a table lock .* nothing changed/);
      return true;
    });
    const column = `select count(*)::int as n from information_schema.columns
      where table_schema = 'hookline' and table_name = 'attempts' and column_name = 'url'`;
    assert.equal((await reader.query(column)).rows[0].n, 0, "the column was not half-added");
    await reader.query("commit");

    const store = await connectStore({ databaseUrl: url });
    await store.close();
    assert.equal((await reader.query(column)).rows[0].n, 1);
  } finally {
    await reader.end();
    await backend.dispose();
  }
});

/** The TCP ports this process listens on (from /proc: our socket inodes in LISTEN state). */
async function listeningTcpPorts(): Promise<number[]> {
  const fds = await readdir("/proc/self/fd");
  const inodes = new Set<string>();
  for (const fd of fds) {
    const target = await readlink(`/proc/self/fd/${fd}`).catch(() => "");
    const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
    if (inode) inodes.add(inode);
  }
  const ports: number[] = [];
  for (const file of ["/proc/self/net/tcp", "/proc/self/net/tcp6"]) {
    const lines = (await readFile(file, "utf8").catch(() => "")).split("\n").slice(1);
    for (const line of lines) {
      const cols = line.trim().split(/\s+/);
      // local_address is HEX_IP:HEX_PORT, st 0A is LISTEN, inode is column 10.
      if (cols[3] === "0A" && inodes.has(cols[9] ?? ""))
        ports.push(Number.parseInt(cols[1]?.split(":")[1] ?? "0", 16));
    }
  }
  return ports;
}

test("the embedded store listens on no TCP port: a Unix socket only its owner can reach", {
  skip: settings.kind !== "embedded" && "covered by the embedded run",
}, async () => {
  const dir = await mkdtemp(join(tmpdir(), "hookline-store-"));
  // A data directory others may enter: the socket's own directory must still keep them out.
  await chmod(dir, 0o755);
  const before = await listeningTcpPorts();
  const store = await connectStore({ dataDir: dir });
  try {
    assert.deepEqual(await listeningTcpPorts(), before, "no new TCP listener");
    const host = String(store.pgConfig.host);
    assert.equal(host, join(dir, "run"), "the socket lives in the data directory");
    assert.equal((await stat(host)).mode & 0o777, 0o700, "only the owner may enter its directory");
    const socketPath = join(host, `.s.PGSQL.${store.pgConfig.port}`);
    assert.equal((await stat(socketPath)).mode & 0o777, 0o600);
    // pg (and so BullMQ's PostgreSQL backend) reaches it through that config.
    const client = new pg.Client(store.pgConfig);
    await client.connect();
    assert.equal((await client.query("select 1 as one")).rows[0]?.one, 1);
    await client.end();
    if (process.getuid?.() === 0) {
      // Another local user (nobody) cannot connect, whatever user name or password it offers.
      const child = spawnSync(
        process.execPath,
        [
          "-e",
          `require("net").connect(${JSON.stringify(socketPath)}).on("connect",()=>{console.log("connected");process.exit(0)}).on("error",(e)=>{console.log(e.code);process.exit(0)})`,
        ],
        { uid: 65534, gid: 65534, encoding: "utf8", timeout: 10_000 },
      );
      assert.equal(child.stdout.trim(), "EACCES");
    }
  } finally {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
});

test("on the embedded store a NOTIFY reaches every other connection that LISTENs, as on a server", {
  skip: settings.kind !== "embedded" && "covered by the embedded run",
}, async () => {
  const store = await connectStore({ dataDir: null });
  const connect = async () => {
    const client = new pg.Client(store.pgConfig);
    await client.connect();
    return client;
  };
  const [listener, other, sender] = await Promise.all([connect(), connect(), connect()]);
  try {
    await listener.query("-- BullMQ's workers listen like this\nLISTEN bullmq_jobs;");
    await other.query('LISTEN "Other"');
    // A notification that is never passed on fails the test at this deadline (its finally then
    // closes everything) instead of hanging the run.
    const heard = (client: pg.Client) =>
      new Promise<string>((resolve, reject) => {
        const deadline = setTimeout(() => reject(new Error("no notification within 10 s")), 10_000);
        client.once("notification", (n) => {
          clearTimeout(deadline);
          resolve(`${n.channel}:${n.payload}`);
        });
      });
    const first = heard(listener);
    await sender.query("select pg_notify('bullmq_jobs', 'queue-a')");
    assert.equal(await first, "bullmq_jobs:queue-a");
    // Sent inside a transaction, it is passed on at commit; the other channel hears only its own.
    const second = heard(listener);
    const otherHeard = heard(other);
    await sender.query("begin");
    await sender.query("notify bullmq_jobs, 'queue-b'");
    await sender.query("notify \"Other\", 'o'");
    await sender.query("commit");
    assert.equal(await second, "bullmq_jobs:queue-b");
    assert.equal(await otherHeard, "Other:o");
    // One connection's UNLISTEN ends listening for the shared session; the others keep hearing.
    await other.query("LISTEN bullmq_jobs");
    await other.query("UNLISTEN bullmq_jobs");
    const third = heard(listener);
    await sender.query("select pg_notify('bullmq_jobs', 'queue-c')");
    assert.equal(await third, "bullmq_jobs:queue-c");
  } finally {
    await Promise.all([listener.end(), other.end(), sender.end()]);
    await store.close();
  }
});

test("an in-memory embedded store gets a private temporary socket directory, removed on close", {
  skip: settings.kind !== "embedded" && "covered by the embedded run",
}, async () => {
  const store = await connectStore({ dataDir: null });
  const host = String(store.pgConfig.host);
  assert.ok(host.startsWith(tmpdir()), host);
  assert.equal((await stat(host)).mode & 0o777, 0o700);
  await store.close();
  await assert.rejects(stat(host), /ENOENT/);
});

test("a socket left by a killed process does not stop the next start", {
  skip: settings.kind !== "embedded" && "covered by the embedded run",
}, async () => {
  const dir = await mkdtemp(join(tmpdir(), "hookline-store-"));
  try {
    await mkdir(join(dir, "run"), { recursive: true });
    await writeFile(join(dir, "run", ".s.PGSQL.5432"), "");
    const store = await connectStore({ dataDir: dir });
    await store.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
