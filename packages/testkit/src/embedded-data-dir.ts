import { createHash, randomBytes } from "node:crypto";
import { cp, mkdtemp, rename, rm, stat } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";

/**
 * A new embedded data directory for one test, copied from an empty cluster initialised once per
 * machine. PGlite's initdb costs about 4 s of CPU, which every embedded test file would pay
 * (most of an embedded file's run on two busy cores); a copy takes a quarter of a second. Only
 * the bare cluster is kept: Hookline's migrations still run when the process opens the copy.
 */
export async function freshEmbeddedDataDir(prefix: string): Promise<string> {
  const template = await emptyClusterTemplate();
  const dataDir = await mkdtemp(join(tmpdir(), prefix));
  await cp(template, dataDir, { recursive: true });
  return dataDir;
}

let building: Promise<string> | undefined;

/** The empty cluster for the installed PGlite, built on first use (test processes may race). */
function emptyClusterTemplate(): Promise<string> {
  building ??= (async () => {
    const dir = join(tmpdir(), `hookline-pglite-empty-${await pgliteFingerprint()}`);
    if (await exists(join(dir, "PG_VERSION"))) return dir;
    // Built aside and renamed into place, so no process ever copies a half-built cluster.
    const aside = `${dir}.${randomBytes(4).toString("hex")}`;
    const pglite = await PGlite.create({ dataDir: aside });
    await pglite.close();
    try {
      await rename(aside, dir);
    } catch {
      // Another test process put its own there first: use that one.
      await rm(aside, { recursive: true, force: true });
    }
    return dir;
  })();
  return building;
}

/** Which PGlite build a cluster comes from: another version gets its own template. */
async function pgliteFingerprint(): Promise<string> {
  const entry = createRequire(import.meta.url).resolve("@electric-sql/pglite");
  const { size, mtimeMs } = await stat(entry);
  return createHash("sha256").update(`${entry}:${size}:${mtimeMs}`).digest("hex").slice(0, 16);
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}
