/**
 * Run by each package's `test` script before `node --test dist-test/...`: when a source or test
 * file is newer than the last compile into dist-test, compiles again (`pnpm run typecheck`), so a
 * test edited since runs as edited, not as it was. In CI the typecheck step has just compiled,
 * and this costs one look at the files' times.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";

/** Written by the typecheck script after tsc emitted dist-test. */
const STAMP = "dist-test/compiled-at";

function newestChange(path: string): number {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestChange(join(path, entry)));
  return newest;
}

const compiledAt = existsSync(STAMP) ? statSync(STAMP).mtimeMs : Number.NEGATIVE_INFINITY;
const changedAt = Math.max(...["src", "test", "tsconfig.json"].map(newestChange));
if (changedAt > compiledAt) execFileSync("pnpm", ["run", "typecheck"], { stdio: "inherit" });
