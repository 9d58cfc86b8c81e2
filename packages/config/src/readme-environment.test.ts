import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

// The operator's reference is the README's environment table: every variable the configuration
// reads is documented there (or, test-only, below it), and every variable it lists is read.
const root = new URL("../../../", import.meta.url);
const readme = readFileSync(new URL("README.md", root), "utf8");
const source = readFileSync(new URL("packages/config/src/config.ts", root), "utf8");
const names = (text: string) => new Set(text.match(/HOOKLINE_[A-Z0-9_]+/g) ?? []);

test("every HOOKLINE_ variable the configuration reads is in the README, and every one its table lists is read", () => {
  const read = names(source);
  const documented = names(readme);
  const tabled = names(
    readme
      .split("\n")
      .filter((line) => line.startsWith("| `HOOKLINE_"))
      .join("\n"),
  );
  assert.ok(read.size > 30 && tabled.size > 30, "both lists were found");
  assert.deepEqual(
    [...read].filter((name) => !documented.has(name)),
    [],
    "read but not in the README",
  );
  assert.deepEqual(
    [...tabled].filter((name) => !read.has(name)),
    [],
    "in the README's table but never read",
  );
});
