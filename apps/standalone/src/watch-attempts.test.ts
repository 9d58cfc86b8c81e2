import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { Code, ConnectError } from "@connectrpc/connect";
import type { Attempt } from "@hookline/contracts";
import { emitEvent, recordAttempts } from "@hookline/store";
import { eventually, type Receiver, readTestSettings, startReceiver } from "@hookline/testkit";
import { startTestService, type TestService } from "./test-helpers.js";

const settings = readTestSettings(process.env);

let svc: TestService;
let receiver: Receiver;
before(async () => {
  svc = await startTestService(settings, {
    HOOKLINE_WATCH_BUFFER: "40",
    HOOKLINE_SWEEP_INTERVAL: "1h",
    // One test holds 300 streams at once, over one HTTP/2 connection: above the defaults (200 and 100).
    HOOKLINE_MAX_STREAMS: "400",
    HOOKLINE_HTTP2_MAX_STREAMS: "400",
  });
  receiver = await startReceiver();
});
after(async () => {
  await receiver.close();
  await svc.close();
});

/** Reads a stream into an array until `stop` says so; aborts it then. */
async function collect(
  request: { tenantId: string; afterAttemptId?: bigint },
  stop: (seen: Attempt[]) => boolean,
) {
  const controller = new AbortController();
  const seen: Attempt[] = [];
  const stream = svc.log.watchAttempts({ ...request }, { signal: controller.signal });
  const done = (async () => {
    try {
      for await (const message of stream) {
        if (message.attempt) seen.push(message.attempt);
        if (stop(seen)) break;
      }
    } catch (error) {
      if (!controller.signal.aborted) throw error;
    } finally {
      controller.abort(); // the client goes away
    }
  })();
  return { seen, done, abort: () => controller.abort() };
}

const emit = (tenantId: string, eventId: string) =>
  svc.emit.emit({ tenantId, eventId, eventType: "x", dataJson: "{}" });

test("attempts recorded after the stream opens arrive live, in id order, filtered by tenant", async () => {
  await svc.endpoints.createEndpoint({ tenantId: "live", id: "ep", url: receiver.url });
  await svc.endpoints.createEndpoint({ tenantId: "other", id: "ep", url: receiver.url });
  const watch = await collect({ tenantId: "live" }, (seen) => seen.length === 3);
  await eventually(
    async () => svc.service.api.openStreams,
    (n) => n === 1,
  );
  for (const n of [1, 2, 3]) {
    await emit("other", `o${n}`);
    await emit("live", `e${n}`);
  }
  await watch.done;
  assert.deepEqual(watch.seen.map((a) => a.eventId).sort(), ["e1", "e2", "e3"]);
  const ids = watch.seen.map((a) => a.id);
  assert.deepEqual(
    ids,
    [...ids].sort((a, b) => (a < b ? -1 : 1)),
  );
  assert.ok(watch.seen.every((a) => a.tenantId === "live"));
});

test("a client that reconnects with its last id gets every attempt after it exactly once", async () => {
  await svc.endpoints.createEndpoint({ tenantId: "resume", id: "ep", url: receiver.url });
  const first = await collect({ tenantId: "resume" }, (seen) => seen.length === 5);
  await eventually(
    async () => svc.service.api.openStreams,
    (n) => n >= 1,
  );
  // Attempts keep arriving throughout: before, during and after the disconnect.
  const total = 40;
  const emitting = (async () => {
    for (let n = 0; n < total; n++) await emit("resume", `e${n}`);
  })();
  await first.done;
  const lastSeen = first.seen.at(-1)?.id ?? 0n;
  const second = await collect(
    { tenantId: "resume", afterAttemptId: lastSeen },
    (seen) => first.seen.length + seen.length === total,
  );
  await emitting;
  await second.done;
  const all = [...first.seen, ...second.seen];
  assert.equal(new Set(all.map((a) => a.id)).size, total, "no duplicate");
  assert.deepEqual(
    all.map((a) => a.eventId).sort(),
    Array.from({ length: total }, (_, n) => `e${n}`).sort(),
    "no gap",
  );
  const ids = all.map((a) => a.id);
  assert.deepEqual(
    ids,
    [...ids].sort((a, b) => (a < b ? -1 : 1)),
    "in order across the seam",
  );
});

/** Opens a stream "from now" and resolves with its start id once its headers arrive (it is live). */
async function startOfStreamFromNow(tenantId: string): Promise<bigint> {
  const controller = new AbortController();
  try {
    return await new Promise<bigint>((resolve, reject) => {
      const stream = svc.log.watchAttempts(
        { tenantId },
        {
          signal: controller.signal,
          onHeader: (headers) => resolve(BigInt(headers.get("hookline-after-attempt-id") ?? "-1")),
        },
      );
      (async () => {
        for await (const _ of stream) reject(new Error("an attempt arrived before the headers"));
      })().catch((error) => {
        if (!controller.signal.aborted) reject(error);
      });
    });
  } finally {
    controller.abort();
  }
}

test("the start id in a stream's headers, sent before any attempt, resumes it with no gap or duplicate", async () => {
  await svc.endpoints.createEndpoint({ tenantId: "start", id: "ep", url: receiver.url });
  // Connected "from now", and gone again before anything happened: all the client has is the id.
  const start = await startOfStreamFromNow("start");
  await emit("start", "a1");
  await emit("start", "a2");
  await eventually(
    () => svc.log.listAttempts({ tenantId: "start" }),
    (r) => r.attempts.length === 2,
  );
  const resumed = await collect({ tenantId: "start", afterAttemptId: start }, (seen) => seen.length === 3);
  await emit("start", "a3");
  await resumed.done;
  // a1 and a2 may be attempted at once, so either may get the lower id; a3 came after both.
  assert.deepEqual(
    resumed.seen
      .map((a) => a.eventId)
      .slice(0, 2)
      .sort(),
    ["a1", "a2"],
  );
  assert.equal(resumed.seen[2]?.eventId, "a3");
  assertIdOrder(resumed.seen);
  assert.ok(resumed.seen.every((a) => a.id > start));
});

test("after_attempt_id replays history recorded before the stream opened", async () => {
  await svc.endpoints.createEndpoint({ tenantId: "history", id: "ep", url: receiver.url });
  for (const n of [1, 2, 3]) await emit("history", `h${n}`);
  await eventually(
    () => svc.log.listAttempts({ tenantId: "history" }),
    (r) => r.attempts.length === 3,
  );
  const replay = await collect({ tenantId: "history", afterAttemptId: 1n }, (seen) => seen.length === 3);
  await replay.done;
  // Delivered concurrently, so recorded (and numbered) in any order: the stream is in id order.
  assert.deepEqual(replay.seen.map((a) => a.eventId).sort(), ["h1", "h2", "h3"]);
  assertIdOrder(replay.seen);
});

function assertIdOrder(seen: { id: bigint }[]): void {
  const ids = seen.map((a) => a.id);
  assert.deepEqual(
    ids,
    [...ids].sort((a, b) => (a < b ? -1 : 1)),
  );
}

test("a client that stops reading is ended with RESOURCE_EXHAUSTED and can resume from its cursor", async () => {
  const db = svc.service.infra.store.db;
  const endpoints = Array.from({ length: 50 }, (_, n) => `ep${n}`);
  for (const id of endpoints)
    await svc.endpoints.createEndpoint({ tenantId: "slow", id, url: receiver.url, eventTypes: ["slow.x"] });
  const controller = new AbortController();
  const stream = svc.log
    .watchAttempts({ tenantId: "slow" }, { signal: controller.signal })
    [Symbol.asyncIterator]();
  const firstRead = stream.next();
  await eventually(
    async () => svc.service.api.openStreams,
    (n) => n >= 1,
  );
  // Far more attempts than the transport's windows plus the 40-attempt buffer can hold, written
  // straight to the store (no queue job, so no HTTP) to make them quickly.
  const count = 5000;
  for (let n = 0; n < count / endpoints.length; n++) {
    const { deliveries } = await emitEvent(
      db,
      { tenantId: "slow", id: `s${n}`, eventType: "slow.x", dataJson: "{}" },
      new Date(),
    );
    await recordAttempts(
      db,
      deliveries.map((d) => ({
        deliveryId: d.id,
        attemptNumber: 1,
        url: "https://x.test/hook",
        startedAt: new Date(),
        durationMs: 1,
        responseStatus: 200,
        responseBody: "ok",
        error: "",
        deliveryStatus: "delivered" as const,
        nextAttemptAt: null,
      })),
      new Date(),
    );
  }
  await eventually(
    async () => svc.service.api.openStreams,
    (n) => n === 0,
    { timeoutMs: 20_000 },
  );
  let received = (await firstRead).done ? 0 : 1;
  let failure: unknown;
  try {
    for (;;) {
      const next = await stream.next();
      if (next.done) break;
      received += 1;
    }
  } catch (error) {
    failure = error;
  }
  assert.ok(failure instanceof ConnectError, `the stream failed (${received} received)`);
  assert.equal(failure.code, Code.ResourceExhausted);
  const cursor = /after_attempt_id=(\d+)/.exec(failure.message)?.[1];
  assert.ok(cursor, failure.message);
  assert.ok(received < count);
  // Resuming from the cursor picks up where it ended.
  const resumed = await collect(
    { tenantId: "slow", afterAttemptId: BigInt(cursor) },
    (seen) => received + seen.length === count,
  );
  await resumed.done;
  assert.equal(received + resumed.seen.length, count);
});

test("hundreds of concurrent streams all see an attempt, and release everything when they go", async () => {
  await svc.endpoints.createEndpoint({ tenantId: "many", id: "ep", url: receiver.url });
  const streams = await Promise.all(
    Array.from({ length: 300 }, () => collect({ tenantId: "many" }, (seen) => seen.length === 1)),
  );
  await eventually(
    async () => svc.service.api.openStreams,
    (n) => n === 300,
  );
  await emit("many", "one");
  await Promise.all(streams.map((s) => s.done));
  assert.ok(streams.every((s) => s.seen[0]?.eventId === "one"));
  await eventually(
    async () => svc.service.api.openStreams,
    (n) => n === 0,
  );
  // Still healthy afterwards.
  await emit("many", "two");
  await eventually(
    () => svc.log.listAttempts({ tenantId: "many" }),
    (r) => r.attempts.length === 2,
  );
});

test("a stream opened with no cursor shows only attempts recorded after it opened", async () => {
  await svc.endpoints.createEndpoint({ tenantId: "quiet", id: "ep", url: receiver.url });
  // Recorded while no stream is open: the feed is idle and reads nothing.
  await emit("quiet", "before");
  await eventually(
    () => svc.log.listAttempts({ tenantId: "quiet" }),
    (r) => r.attempts.length === 1,
  );
  const watch = await collect({ tenantId: "quiet" }, (seen) => seen.length === 1);
  await eventually(
    async () => svc.service.api.openStreams,
    (n) => n === 1,
  );
  await emit("quiet", "after");
  await watch.done;
  assert.deepEqual(
    watch.seen.map((a) => a.eventId),
    ["after"],
  );
});
