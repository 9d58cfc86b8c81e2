import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { createTestBackend, readTestSettings } from "@hookline/testkit";
import { connectStore, createEndpoint, getEndpoint } from "./index.js";

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
    await Promise.all(stores.map((s) => s.close()));
  } finally {
    await backend.dispose();
  }
});
