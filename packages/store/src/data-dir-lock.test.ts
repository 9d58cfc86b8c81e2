import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { readTestSettings } from "@hookline/testkit";
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

test(
  "a lock left by a process that died is taken over; one held by a live process is not",
  embeddedOnly,
  () =>
    withDir(async (dir) => {
      const live = process.ppid;
      await writeFile(join(dir, "hookline.lock"), `${live}\n${hostname()}\n`);
      await assert.rejects(connectStore({ dataDir: dir }), new RegExp(`in use by process ${live}`));

      const exited = spawnSync(process.execPath, ["-e", ""]).pid;
      await writeFile(join(dir, "hookline.lock"), `${exited}\n${hostname()}\n`);
      const store = await connectStore({ dataDir: dir });
      await store.close();
    }),
);
