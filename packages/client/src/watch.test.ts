import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { Code, ConnectError } from "@connectrpc/connect";
import type { Attempt } from "@hookline/contracts";
import {
  createTestBackend,
  eventually,
  type HooklineProcess,
  held,
  type Receiver,
  readTestSettings,
  spawnHookline,
  startCuttableProxy,
  startReceiver,
  type TestBackend,
} from "@hookline/testkit";
import { createHooklineClient, type HooklineClient } from "./client.js";
import { allAttemptIds } from "./test-helpers.js";
import { type ReconnectInfo, watchAttempts } from "./watch.js";

const settings = readTestSettings(process.env);

const kind = settings.kind;
let backend: TestBackend;
let receiver: Receiver;
let service: HooklineProcess;
let address: string;
let direct: HooklineClient;

const SERVICE_ENV = { HOOKLINE_QUEUE_POLL_INTERVAL: "20ms" };

before(async () => {
  backend = await createTestBackend(settings);
  receiver = await startReceiver();
  service = await spawnHookline("standalone", {
    ...backend.env,
    ...SERVICE_ENV,
    HOOKLINE_API_ADDR: "127.0.0.1:0",
  });
  address = service.address ?? "";
  direct = createHooklineClient({ address });
  // after_attempt_id 0 means "only new attempts": seed one attempt so that every test's
  // "after the attempt before my first" cursor is a real id (1 or more), not 0.
  await tenantWithFirstAttempt("seed");
});

after(async () => {
  direct?.close();
  await service?.stop();
  await receiver?.close();
  await backend?.dispose();
});

/** A tenant with one endpoint; the first event's attempt is already recorded. */
async function tenantWithFirstAttempt(tenantId: string): Promise<bigint> {
  await direct.endpoints.createEndpoint({ tenantId, id: "ep", url: receiver.url });
  await emit(tenantId, "e1");
  const ids = await eventually(
    () => allAttemptIds(direct, tenantId),
    (found) => found.length === 1,
  );
  return ids[0] ?? 0n;
}

async function emit(tenantId: string, eventId: string): Promise<void> {
  await direct.emit.emit({ tenantId, eventId, eventType: "thing.happened", dataJson: `{"n":"${eventId}"}` });
}

/** Collects a watch in the background until stopped; a watch that fails fails `until`. */
function follow(client: HooklineClient, tenantId: string, afterAttemptId: bigint) {
  const seen: Attempt[] = [];
  const reconnects: ReconnectInfo[] = [];
  const abort = new AbortController();
  const live = held();
  let failure: unknown;
  const done = (async () => {
    const options = {
      signal: abort.signal,
      onReconnect: (i: ReconnectInfo) => reconnects.push(i),
      onLive: () => live.release(undefined),
    };
    for await (const attempt of watchAttempts(client, { tenantId, afterAttemptId }, options))
      seen.push(attempt);
  })().catch((error: unknown) => {
    failure = error;
  });
  return {
    seen,
    reconnects,
    /** Resolves once the first stream is live. */
    live: live.promise,
    async until(n: number) {
      await eventually(
        async () => (failure === undefined ? seen.length : Number.NaN),
        (count) => Number.isNaN(count) || count >= n,
      );
      if (failure !== undefined) throw failure;
    },
    async stop() {
      abort.abort();
      await done;
      if (failure !== undefined) throw failure;
    },
  };
}

/** A watch through a relay the test can cut or reset; `stop` ends the watch, then the relay. */
async function followThroughProxy(tenantId: string, afterAttemptId: bigint) {
  const proxy = await startCuttableProxy(address);
  const viaProxy = createHooklineClient({ address: proxy.address });
  const watch = follow(viaProxy, tenantId, afterAttemptId);
  return {
    proxy,
    watch,
    stop: () =>
      watch.stop().finally(async () => {
        viaProxy.close();
        await proxy.close();
      }),
  };
}

test(`a watch resumes after a cut connection with no gap and no duplicate (${kind})`, async () => {
  const tenantId = "cut";
  const first = await tenantWithFirstAttempt(tenantId);
  const { proxy, watch, stop } = await followThroughProxy(tenantId, first - 1n);
  try {
    await watch.until(1);
    await emit(tenantId, "e2");
    await emit(tenantId, "e3");
    await watch.until(3);

    // Attempts recorded while the watcher cannot reach the api must come in the backfill.
    proxy.cut();
    await emit(tenantId, "e4");
    await emit(tenantId, "e5");
    await eventually(
      () => allAttemptIds(direct, tenantId),
      (ids) => ids.length === 5,
    );
    assert.equal(watch.seen.length, 3);
    proxy.restore();
    await emit(tenantId, "e6");
    await watch.until(6);
  } finally {
    await stop();
  }
  assert.deepEqual(
    watch.seen.map((a) => a.id),
    await allAttemptIds(direct, tenantId),
  );
  // Events emitted back to back can be in flight at once, and recorded in either order.
  assert.deepEqual(watch.seen.map((a) => a.eventId).sort(), ["e1", "e2", "e3", "e4", "e5", "e6"]);
  assert.ok(watch.reconnects.length >= 1, "the watch reconnected");
  assert.equal(watch.reconnects[0]?.afterAttemptId, watch.seen[2]?.id);
});

test(`a watch started from now that drops before its first attempt still gets those recorded meanwhile (${kind})`, async () => {
  const tenantId = "from-now";
  await tenantWithFirstAttempt(tenantId);
  const { proxy, watch, stop } = await followThroughProxy(tenantId, 0n);
  try {
    await watch.live;
    proxy.cut();
    await emit(tenantId, "e2");
    await eventually(
      () => allAttemptIds(direct, tenantId),
      (ids) => ids.length === 2,
    );
    proxy.restore();
    await emit(tenantId, "e3");
    await watch.until(2);
  } finally {
    await stop();
  }
  // Before, the cursor stayed 0 ("from now on") until an attempt came: e2 was never shown.
  assert.deepEqual(watch.seen.map((a) => a.eventId).sort(), ["e2", "e3"]);
});

test(`a watch resumes after its connection is reset, with no gap and no duplicate (${kind})`, async () => {
  const tenantId = "reset";
  const first = await tenantWithFirstAttempt(tenantId);
  const { proxy, watch, stop } = await followThroughProxy(tenantId, first - 1n);
  try {
    await watch.until(1);
    // A reset (ECONNRESET) reaches connect-node as ABORTED, not UNAVAILABLE: before, that ended
    // the watch with an error instead of resuming it.
    proxy.reset();
    await emit(tenantId, "e2");
    await watch.until(2);
  } finally {
    await stop();
  }
  assert.deepEqual(
    watch.seen.map((a) => a.eventId),
    ["e1", "e2"],
  );
  assert.ok(watch.reconnects.length >= 1, "the watch reconnected");
});

test(`a watch follows the service through a restart on the same data (${kind})`, async () => {
  const tenantId = "restart";
  const first = await tenantWithFirstAttempt(tenantId);
  const client = createHooklineClient({ address });
  const watch = follow(client, tenantId, first - 1n);
  try {
    await emit(tenantId, "e2");
    await watch.until(2);
    assert.equal(await service.stop(), 0);
    service = await spawnHookline("standalone", {
      ...backend.env,
      ...SERVICE_ENV,
      HOOKLINE_API_ADDR: address,
    });
    await emit(tenantId, "e3");
    await emit(tenantId, "e4");
    await watch.until(4);
  } finally {
    await watch.stop().finally(() => client.close());
  }
  // e3 and e4 can be in flight at once after the restart, and recorded in either order.
  assert.deepEqual(watch.seen.map((a) => a.eventId).sort(), ["e1", "e2", "e3", "e4"]);
  assert.deepEqual(
    watch.seen.map((a) => a.id),
    await allAttemptIds(direct, tenantId),
  );
  assert.ok(watch.reconnects.length >= 1, "the watch reconnected");
});

test("a watch rejects what retrying cannot fix, and ends quietly when aborted", async () => {
  const bad = watchAttempts(direct, { tenantId: "bad\u0001tenant" });
  await assert.rejects(
    async () => {
      for await (const _ of bad);
    },
    (error: unknown) => error instanceof ConnectError && error.code === Code.InvalidArgument,
  );

  const abort = new AbortController();
  const quiet = watchAttempts(direct, { tenantId: "nobody" }, { signal: abort.signal });
  setTimeout(() => abort.abort(), 100);
  const seen: Attempt[] = [];
  for await (const attempt of quiet) seen.push(attempt);
  assert.deepEqual(seen, []);
});
