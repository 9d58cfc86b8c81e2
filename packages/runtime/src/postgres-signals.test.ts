import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { FedQueue } from "@hookline/queue";
import { connectStore, type StoreConnection } from "@hookline/store";
import { createTestBackend, eventually, readTestSettings, type TestBackend } from "@hookline/testkit";
import { createLogger } from "./logger.js";
import { postgresSignals } from "./postgres-signals.js";

const settings = readTestSettings(process.env);
const skip =
  settings.kind === "embedded" &&
  "embedded PGlite has no NOTIFY across connections (the embedded service signals in process)";

let backend: TestBackend;
let store: StoreConnection;
before(async () => {
  if (skip) return;
  backend = await createTestBackend(settings);
  store = await connectStore({ databaseUrl: String(backend.databaseUrl) });
});
after(async () => {
  await store?.close();
  await backend?.dispose();
});

const silent = createLogger("signals-test", () => {});

test("news published in one process reaches another's subscribers, and its own just once", {
  skip,
}, async () => {
  // Two signal sets on one database stand for two processes.
  const a = postgresSignals(store, silent);
  const b = postgresSignals(store, silent);
  try {
    const heardByA: string[] = [];
    const heardByB: string[] = [];
    await a.endpointsChanged.subscribe(() => heardByA.push("endpoints"));
    await b.endpointsChanged.subscribe(() => heardByB.push("endpoints"));
    await a.attemptsRecorded.subscribe(() => heardByA.push("attempts"));
    await b.attemptsRecorded.subscribe(() => heardByB.push("attempts"));
    // A new LISTEN connection says it may have missed news; start counting after that.
    heardByA.length = 0;
    heardByB.length = 0;

    a.endpointsChanged.publish();
    assert.deepEqual(heardByA, ["endpoints"], "this process's subscribers hear it at once");
    await eventually(
      async () => heardByB,
      (heard) => heard.includes("endpoints"),
    );
    // Notifications reach a listener in commit order: by the time A hears B's news, its own
    // NOTIFY has reached its LISTEN connection too, and must have been skipped there.
    b.attemptsRecorded.publish();
    await eventually(
      async () => heardByA,
      (heard) => heard.includes("attempts"),
    );
    assert.deepEqual(heardByA, ["endpoints", "attempts"]);
    assert.deepEqual(heardByB, ["endpoints", "attempts"]);
  } finally {
    await a.close();
    await b.close();
  }
});

test("work news names its queues across processes, or says 'somewhere' when it cannot", {
  skip,
}, async () => {
  const a = postgresSignals(store, silent);
  const b = postgresSignals(store, silent);
  try {
    const heard: (FedQueue[] | undefined)[] = [];
    await b.workFed.subscribe((fed) => heard.push(fed));
    heard.length = 0;
    a.workFed.publish([{ queue: "lane-3", dueAt: 1234 }]);
    // Longer than a NOTIFY payload may be: sent as "look in the store".
    a.workFed.publish(Array.from({ length: 2000 }, (_, n) => ({ queue: `queue-${n}`, dueAt: n })));
    await eventually(
      async () => heard,
      (news) => news.length === 2,
    );
    assert.deepEqual(heard, [[{ queue: "lane-3", dueAt: 1234 }], undefined]);
  } finally {
    await a.close();
    await b.close();
  }
});

test("a closed signal set hears no more news from other processes", { skip }, async () => {
  const a = postgresSignals(store, silent);
  const b = postgresSignals(store, silent);
  const c = postgresSignals(store, silent);
  try {
    const heardByB: string[] = [];
    const heardByC: string[] = [];
    await b.endpointsChanged.subscribe(() => heardByB.push("endpoints"));
    await c.endpointsChanged.subscribe(() => heardByC.push("endpoints"));
    heardByB.length = 0;
    heardByC.length = 0;
    await b.close();
    a.endpointsChanged.publish();
    await eventually(
      async () => heardByC,
      (heard) => heard.length > 0,
    );
    assert.deepEqual(heardByB, []);
  } finally {
    await a.close();
    await b.close();
    await c.close();
  }
});
