import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { Health, HealthCheckResponse_ServingStatus as Status } from "@hookline/contracts";
import { held, readTestSettings } from "@hookline/testkit";
import { sql } from "kysely";
import { startTestApi, type TestApi } from "./test-helpers.js";

const settings = readTestSettings(process.env);

let api: TestApi;
before(async () => {
  api = await startTestApi(settings);
});
after(() => api?.close());

// On the embedded store, one open transaction holds the one PGlite session: every other query
// waits. That is how a local client holding BEGIN stalled the service; health must then say so.
test("health is NOT_SERVING while the store does not answer in time, and SERVING again after", {
  skip: settings.kind !== "embedded" && "a held transaction stalls only the embedded store's one session",
}, async () => {
  const health = createClient(Health, createGrpcTransport({ baseUrl: `http://${api.address}` }));
  const check = async () => Status[(await health.check({ service: "" }, { timeoutMs: 5000 })).status];
  assert.equal(await check(), "SERVING");
  const hold = held();
  const began = held();
  const holder = api.infra.store.db.transaction().execute(async (tx) => {
    await sql`select 1`.execute(tx);
    began.release();
    await hold.promise;
  });
  await began.promise;
  try {
    // A cached SERVING may answer for up to a second; then the probe times out.
    const deadline = Date.now() + 5000;
    let status = await check();
    while (status === "SERVING" && Date.now() < deadline) status = await check();
    assert.equal(status, "NOT_SERVING");
  } finally {
    hold.release();
    await holder;
  }
  const deadline = Date.now() + 5000;
  let status = await check();
  while (status !== "SERVING" && Date.now() < deadline) status = await check();
  assert.equal(status, "SERVING");
});
