import { type ChildProcess, execFile, execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { rmSync } from "node:fs";
import { chmod, chown, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { freePort } from "@hookline/testkit";
import pg from "pg";
import { reapOnExit } from "./reaper.js";

const run = promisify(execFile);
const PG_BIN = "/usr/lib/postgresql/15/bin";

/** A PostgreSQL of our own on a free port, which a test may crash and restart (never the shared one). */
export interface ThrowawayPostgres {
  readonly port: number;
  /** Creates a database and returns its URL. */
  createDatabase(name: string): Promise<string>;
  /** Crashes it (`pg_ctl stop -m immediate`): connections drop, nothing is checkpointed. */
  crash(): Promise<void>;
  start(): Promise<void>;
  dispose(): Promise<void>;
}

export async function startPostgres(): Promise<ThrowawayPostgres> {
  const dir = await mkdtemp(join(tmpdir(), "hookline-faults-pg-"));
  const data = join(dir, "data");
  const port = await freePort();
  // As root, the server must run as postgres, in a directory postgres owns.
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const { stdout } = await run("id", ["-u", "postgres"]);
    const { stdout: gid } = await run("id", ["-g", "postgres"]);
    await chown(dir, Number(stdout.trim()), Number(gid.trim()));
    await chmod(dir, 0o700);
  }
  const command = (bin: string, args: string[]): [string, string[]] =>
    asRoot ? ["runuser", ["-u", "postgres", "--", `${PG_BIN}/${bin}`, ...args]] : [`${PG_BIN}/${bin}`, args];
  const pgRun = (bin: string, args: string[]) => run(...command(bin, args));
  await pgRun("initdb", ["-D", data, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8"]);
  // fsync off: the tests crash the server process, never the machine, so the page cache survives.
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=300`;
  const ctl = (...args: string[]) => pgRun("pg_ctl", ["-D", data, "-l", join(dir, "log"), "-w", ...args]);
  let running = false;
  const start = async () => {
    await ctl("-o", options, "start");
    running = true;
  };
  const unreap = reapOnExit(() => {
    if (running) execFileSync(...command("pg_ctl", ["-D", data, "-w", "stop", "-m", "immediate"]));
    rmSync(dir, { recursive: true, force: true });
  });
  await start();
  const admin = `postgres://postgres@127.0.0.1:${port}/postgres`;
  return {
    port,
    async createDatabase(name) {
      const client = new pg.Client({ connectionString: admin });
      await client.connect();
      try {
        await client.query(`create database ${name}`);
      } finally {
        await client.end();
      }
      return `postgres://postgres@127.0.0.1:${port}/${name}`;
    },
    async crash() {
      await ctl("stop", "-m", "immediate");
      running = false;
    },
    start,
    async dispose() {
      if (running) await ctl("stop", "-m", "immediate").catch(() => {});
      running = false;
      unreap();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A Redis of our own, without persistence: killing it and starting it again gives an empty one. */
export interface ThrowawayRedis {
  readonly url: string;
  /** SIGKILL, down for downMs (whileDown runs then), then a new empty server on the same port. */
  restartEmpty(downMs: number, whileDown?: () => void): Promise<void>;
  dispose(): Promise<void>;
}

export async function startRedis(): Promise<ThrowawayRedis> {
  const port = await freePort();
  const dir = await mkdtemp(join(tmpdir(), "hookline-faults-redis-"));
  let child: ChildProcess | undefined;
  const launch = async () => {
    const args = ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"];
    const started = spawn("redis-server", [...args, "--dir", dir], { stdio: ["ignore", "pipe", "inherit"] });
    child = started;
    const unreap = reapOnExit(() => started.kill("SIGKILL"));
    started.once("exit", unreap);
    let output = "";
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`redis-server not ready:\n${output}`)), 10_000);
      started.stdout?.on("data", (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes("Ready to accept connections")) {
          clearTimeout(timer);
          resolve();
        }
      });
      started.once("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`redis-server exited with ${code}:\n${output}`));
      });
    });
    started.stdout?.resume();
  };
  const kill = async () => {
    const current = child;
    if (!current || current.exitCode !== null || current.signalCode !== null) return;
    const exited = once(current, "exit");
    current.kill("SIGKILL");
    await exited;
  };
  await launch();
  const unreap = reapOnExit(() => rmSync(dir, { recursive: true, force: true }));
  return {
    url: `redis://127.0.0.1:${port}/0`,
    async restartEmpty(downMs, whileDown) {
      await kill();
      whileDown?.();
      await new Promise((resolve) => setTimeout(resolve, downMs));
      await launch();
    },
    async dispose() {
      await kill();
      unreap();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
