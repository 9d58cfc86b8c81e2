import { open, readFile, rm } from "node:fs/promises";
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

/**
 * Takes the data directory for this process, as PostgreSQL's postmaster.pid does: a file made
 * with O_EXCL that names the holder. PGlite has no lock of its own, and a second process on the
 * same directory wrote the same files and replaced the first one's socket, whose deliveries then
 * stopped for good. A lock left by a process that died is taken over; one whose holder runs on
 * another host (a shared volume) is never guessed stale.
 */
export async function lockDataDir(dataDir: string): Promise<DataDirLock> {
  const path = join(dataDir, LOCK_FILE);
  const mine = `${process.pid}\n${hostname()}\n`;
  for (let attempt = 0; ; attempt++) {
    try {
      const file = await open(path, "wx", 0o600);
      await file.writeFile(mine);
      await file.close();
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      const holder = await readFile(path, "utf8").catch(() => "");
      // A second try that still finds a lock lost a race with another starting process.
      if (attempt > 0 || holderAlive(holder)) throw new DataDirInUseError(dataDir, describe(holder, path));
      await rm(path, { force: true });
    }
  }
  let released: Promise<void> | undefined;
  return {
    release() {
      released ??= (async () => {
        // Only our own lock: never one a later holder took after a crash of ours was cleaned up.
        if ((await readFile(path, "utf8").catch(() => "")) === mine) await rm(path, { force: true });
      })();
      return released;
    },
  };
}

function holderAlive(holder: string): boolean {
  const [pidText = "", host = ""] = holder.split("\n");
  const pid = Number(pidText);
  // An unreadable or half-written file: its writer may still be starting.
  if (!Number.isInteger(pid) || pid <= 0) return true;
  if (host !== hostname()) return true;
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

function describe(holder: string, path: string): string {
  const [pid = "", host = ""] = holder.split("\n");
  if (!pid) return `another process (if none runs, remove ${path})`;
  return `process ${pid}${host && host !== hostname() ? ` on ${host}` : ""}`;
}
