import assert from "node:assert/strict";
import { test } from "node:test";
import type { AttemptRecord } from "@hookline/store";
import { AttemptFeed, type AttemptSource, FeedOverflowError } from "./attempt-feed.js";

// A fake of our own AttemptSource: no servers, milliseconds.
function fakeSource(): AttemptSource & { record(tenantId: string, endpointId?: string): AttemptRecord } {
  const rows: AttemptRecord[] = [];
  return {
    lastId: async () => BigInt(rows.at(-1)?.id ?? "0"),
    after: async (after, limit) => rows.filter((row) => BigInt(row.id) > after).slice(0, limit),
    record(tenantId, endpointId = "ep") {
      const id = String(rows.length + 1);
      const row: AttemptRecord = {
        id,
        tenantId,
        deliveryId: `dlv_${id}`,
        eventId: `evt_${id}`,
        endpointId,
        attemptNumber: 1,
        startedAt: new Date(0),
        durationMs: 1,
        responseStatus: 200,
        responseBody: "",
        error: "",
        deliveryStatus: "delivered",
        trigger: "scheduled",
        url: "https://x.test/hook",
      };
      rows.push(row);
      return row;
    },
  };
}

const all = { tenantId: "", endpointId: "", eventId: "" };
const options = { bufferLimit: 10, safetyPollMs: 3_600_000 };

test("a live subscription receives, in id order, the new attempts its filter matches", async () => {
  const source = fakeSource();
  const feed = new AttemptFeed(source, options);
  const sub = await feed.subscribe({ ...all, tenantId: "acme" }, new AbortController().signal);
  sub.goLive(feed.lastId);
  source.record("acme");
  source.record("globex");
  source.record("acme", "other");
  feed.wake();
  const it = sub[Symbol.asyncIterator]();
  assert.deepEqual(
    [(await it.next()).value?.id, (await it.next()).value?.id],
    ["1", "3"],
    "globex's attempt is not acme's",
  );
  feed.close();
  assert.equal((await it.next()).done, true);
});

test("a subscription starts after what it was sent already, and an idle feed does not replay the past", async () => {
  const source = fakeSource();
  const feed = new AttemptFeed(source, options);
  source.record("acme");
  source.record("acme");
  // Subscribed while idle: the feed catches up to the newest attempt, so neither old one is offered.
  const sub = await feed.subscribe(all, new AbortController().signal);
  assert.equal(feed.lastId, 2n);
  source.record("acme");
  source.record("acme");
  sub.goLive(3n); // the caller read attempt 3 from the store itself
  feed.wake();
  const it = sub[Symbol.asyncIterator]();
  assert.equal((await it.next()).value?.id, "4");
  feed.close();
});

test("a subscriber that falls more than its buffer behind is ended with FeedOverflowError", async () => {
  const source = fakeSource();
  const feed = new AttemptFeed(source, { ...options, bufferLimit: 2 });
  const sub = await feed.subscribe(all, new AbortController().signal);
  sub.goLive(feed.lastId);
  for (let i = 0; i < 3; i++) source.record("acme");
  feed.wake();
  // Nobody reads meanwhile: the second page overflows the buffer of two, which ends the stream.
  while (feed.openStreams > 0) await new Promise(setImmediate);
  const seen: string[] = [];
  await assert.rejects(
    (async () => {
      for await (const attempt of sub) seen.push(attempt.id);
    })(),
    FeedOverflowError,
  );
  // The buffer is freed at the overflow, not when the stalled client goes: it resumes from the
  // last attempt it was sent, so nothing is lost.
  assert.deepEqual(seen, []);
  assert.equal(feed.openStreams, 0);
});

test("aborting a stream's signal closes its subscription", async () => {
  const feed = new AttemptFeed(fakeSource(), options);
  const controller = new AbortController();
  const sub = await feed.subscribe(all, controller.signal);
  assert.equal(feed.openStreams, 1);
  const next = sub[Symbol.asyncIterator]().next();
  controller.abort();
  assert.equal((await next).done, true);
  assert.equal(feed.openStreams, 0);
});

test("a store away when the api starts fails only the subscriptions meanwhile; the next one reads the position again", async () => {
  const source = fakeSource();
  let away = true;
  const flaky: AttemptSource = {
    ...source,
    lastId: () => (away ? Promise.reject(new Error("store away")) : source.lastId()),
  };
  const feed = new AttemptFeed(flaky, options);
  await assert.rejects(feed.subscribe(all, new AbortController().signal), /store away/);
  away = false;
  source.record("acme");
  const sub = await feed.subscribe(all, new AbortController().signal);
  assert.equal(feed.lastId, 1n, "the newest attempt when it could read the store");
  sub.close();
  feed.close();
});
