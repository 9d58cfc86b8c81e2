import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { readTestSettings } from "@hookline/testkit";
import { lockDataDir } from "./data-dir-lock.js";
import { connectStore, createEndpoint, DataDirInUseError, getEndpoint } from "./index.js";

const settings = readTestSettings(process.env);
const embeddedOnly = { skip: settings.kind !== "embedded" && "covered by the embedded run" };

async function withDir(run: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "hookline-lock-"));
  try {
    await run(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const lockFile = (dir: string) => join(dir, "hookline.lock");
const deadPid = () => spawnSync(process.execPath, ["-e", ""]).pid;

test("a data directory in use is refused to a second opener, and the first keeps working", embeddedOnly, () =>
  withDir(async (dir) => {
    const first = await connectStore({ dataDir: dir });
    try {
      const socket = join(String(first.pgConfig.host), ".s.PGSQL.5432");
      await assert.rejects(
        connectStore({ dataDir: dir }),
        (error: unknown) =>
          error instanceof DataDirInUseError && error.message.includes(`in use by process ${process.pid}`),
      );
      // Before, the second opener replaced the first one's socket: its queries failed from then on.
      await stat(socket);
      await createEndpoint(
        first.db,
        { tenantId: "t", id: "ep", url: "https://x.test", description: "", eventTypes: [], secret: "s" },
        new Date(),
      );
    } finally {
      await first.close();
    }
    const next = await connectStore({ dataDir: dir });
    assert.equal(
      (await getEndpoint(next.db, "t", "ep")).url,
      "https://x.test",
      "closing let the next one in",
    );
    await next.close();
  }),
);

test("a lock whose holder is gone is taken over; one a live process holds is not", () =>
  withDir(async (dir) => {
    const here = hostname();
    const refusedWith = async (content: string, message: RegExp) => {
      await writeFile(lockFile(dir), content);
      await assert.rejects(lockDataDir(dir), message);
    };
    const takenOver = async (content: string) => {
      await writeFile(lockFile(dir), content);
      const lock = await lockDataDir(dir);
      assert.notEqual(await readFile(lockFile(dir), "utf8"), content);
      await lock.release();
    };

    await refusedWith(`${process.ppid}\n${here}\n\n`, new RegExp(`in use by process ${process.ppid}`));
    await refusedWith(
      `7\nanother-host\n\n`,
      /in use by process 7 on another-host \(if it no longer runs, remove /,
    );
    await takenOver(`${deadPid()}\n${here}\n\n`);
    // A restart that got the pid its crashed predecessor had (pid 1 in a container).
    await takenOver(`${process.pid}\n${here}\n\n`);
    // A live process, but not the one that wrote the lock: it started later.
    await takenOver(`${process.ppid}\n${here}\nsome-boot/1\n`);
  }));

test("of several starters that find a stale lock at once, exactly one takes it", () =>
  withDir(async (dir) => {
    // Rounds, since a race shows only in some of them.
    for (let round = 0; round < 20; round++) {
      await writeFile(lockFile(dir), `${deadPid()}\n${hostname()}\n\n`);
      const results = await Promise.allSettled(Array.from({ length: 8 }, () => lockDataDir(dir)));
      const won = results.flatMap((result) => (result.status === "fulfilled" ? [result.value] : []));
      assert.equal(
        won.length,
        1,
        `round ${round}: ${JSON.stringify(results.map((result) => result.status))}`,
      );
      for (const result of results) {
        if (result.status === "rejected")
          assert.ok(result.reason instanceof DataDirInUseError, String(result.reason));
      }
      await won[0]?.release();
    }
  }));
