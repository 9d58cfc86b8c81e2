import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { link, mkdir, readFile, rm, rmdir, stat, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";

/** The embedded data directory is open in another live process (or already in this one). */
export class DataDirInUseError extends Error {
  constructor(
    readonly dataDir: string,
    readonly holder: string,
  ) {
    super(
      `the data directory ${dataDir} is in use by ${holder}: stop it first, or give this one its own HOOKLINE_DATA_DIR`,
    );
    this.name = "DataDirInUseError";
  }
}

/** A held lock on a data directory; release() gives it up (once). */
export interface DataDirLock {
  release(): Promise<void>;
}

const LOCK_FILE = "hookline.lock";
/** Locks this process holds, by path: its own pid in a lock file is then not a restart's leftover. */
const held = new Set<string>();

/**
 * Takes the data directory for this process, as PostgreSQL's postmaster.pid does: a file, made
 * whole and then linked into place (so it exists only complete, and only once), naming its holder.
 * PGlite has no lock of its own, and a second process on the same directory wrote the same files
 * and replaced the first one's socket, whose deliveries then stopped for good.
 *
 * A lock whose holder is gone is taken over: its process has exited, or its pid now belongs to
 * another process (a container restarted as pid 1 finds its own pid in the file). One written on
 * another host is never guessed stale: its holder may be alive there.
 */
export async function lockDataDir(dataDir: string): Promise<DataDirLock> {
  const path = join(dataDir, LOCK_FILE);
  const mine = describeSelf();
  // Unique to this call: two opens in one process in one millisecond shared a draft, and one's
  // cleanup took it away from the other.
  const draft = `${path}.${process.pid}.${randomUUID()}`;
  await writeFile(draft, mine, { mode: 0o600 });
  try {
    if (!(await placed(draft, path))) {
      const holder = await readFile(path, "utf8").catch(() => "");
      if (!isStale(holder, path) || !(await takeOver(path, holder, draft))) {
        throw new DataDirInUseError(
          dataDir,
          describeHolder(await readFile(path, "utf8").catch(() => holder), path),
        );
      }
    }
  } finally {
    await rm(draft, { force: true });
  }
  let released: Promise<void> | undefined;
  return {
    release() {
      released ??= (async () => {
        held.delete(path);
        // Only our own lock: never one that a later holder took over.
        if ((await readFile(path, "utf8").catch(() => "")) === mine) await rm(path, { force: true });
      })();
      return released;
    },
  };
}

/** Links the draft in as the lock, held from then on; false when a lock is there already. */
async function placed(draft: string, path: string): Promise<boolean> {
  try {
    await link(draft, path);
    // Before anything else awaits: another open in this process must not find its own pid there
    // and call it stale. Marked only once the caller resumed, a takeover's removal of its mutex
    // came first, and a second starter in this process judged the new lock stale and took it too.
    held.add(path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  }
}

/**
 * Replaces a stale lock, under a takeover mutex (mkdir is atomic): without it, two starters that
 * both judged it stale could each remove what the other had just put in its place.
 */
async function takeOver(path: string, stale: string, draft: string): Promise<boolean> {
  const mutex = `${path}.takeover`;
  if (!(await made(mutex))) {
    // Another process is taking it over right now, or one died doing so (a mutex left for long).
    const age =
      Date.now() -
      (await stat(mutex).then(
        (s) => s.mtimeMs,
        () => Date.now(),
      ));
    if (age < ABANDONED_TAKEOVER_MS) return false;
    await rmdir(mutex).catch(() => {});
    if (!(await made(mutex))) return false;
  }
  try {
    if ((await readFile(path, "utf8").catch(() => "")) !== stale) return false;
    await rm(path, { force: true });
    return await placed(draft, path);
  } finally {
    await rmdir(mutex).catch(() => {});
  }
}

/** A takeover takes milliseconds; a mutex this old was left by a process that died in one. */
const ABANDONED_TAKEOVER_MS = 10_000;

async function made(directory: string): Promise<boolean> {
  try {
    await mkdir(directory);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  }
}

/** pid, host, and the process's start (boot id and start time, on Linux): who it is, exactly. */
function describeSelf(): string {
  return `${process.pid}\n${hostname()}\n${startOf(process.pid) ?? ""}\n`;
}

function isStale(holder: string, path: string): boolean {
  const [pidText = "", host = "", started = ""] = holder.split("\n");
  const pid = Number(pidText);
  if (!Number.isInteger(pid) || pid <= 0) return false; // not a lock this code wrote: leave it
  if (host !== hostname()) return false;
  if (pid === process.pid) return !held.has(path);
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ESRCH";
  }
  // Alive: the holder itself, unless that pid has since gone to a process that started later.
  const now = startOf(pid);
  return started !== "" && now !== undefined && now !== started;
}

/** A process's boot id and start time (Linux /proc), or undefined where they cannot be read. */
function startOf(pid: number): string | undefined {
  try {
    const boot = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name (which may hold spaces): state is the 3rd, starttime the 22nd.
    const starttime = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
    return starttime ? `${boot}/${starttime}` : undefined;
  } catch {
    return undefined;
  }
}

function describeHolder(holder: string, path: string): string {
  const [pid = "", host = ""] = holder.split("\n");
  if (!pid) return `another process (if none runs, remove ${path})`;
  if (host !== hostname()) return `process ${pid} on ${host} (if it no longer runs, remove ${path})`;
  return `process ${pid}`;
}
