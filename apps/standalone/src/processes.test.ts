import assert from "node:assert/strict";
import { test } from "node:test";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { AttemptLogService, DeliveryStatus, EmitService, EndpointService } from "@hookline/contracts";
import {
  createTestBackend,
  eventually,
  type HooklineProcess,
  readTestSettings,
  spawnHookline,
  startSlowReceiver,
} from "@hookline/testkit";

const settings = readTestSettings(process.env);

function clients(address: string | undefined) {
  const transport = createGrpcTransport({ baseUrl: `http://${address}` });
  return {
    endpoints: createClient(EndpointService, transport),
    emit: createClient(EmitService, transport),
    log: createClient(AttemptLogService, transport),
  };
}

const servers = settings.kind === "servers";

test("two worker processes sharing a prefix share the per-endpoint cap", {
  skip:
    !servers && "needs two worker processes on one PostgreSQL (the embedded store belongs to one process)",
}, async () => {
  const backend = await createTestBackend(settings, "servers");
  const receiver = await startSlowReceiver(100);
  const env = { ...backend.env, HOOKLINE_API_ADDR: "127.0.0.1:0", HOOKLINE_ENDPOINT_CONCURRENCY: "2" };
  const procs: HooklineProcess[] = [];
  try {
    procs.push(
      await spawnHookline("api", env),
      await spawnHookline("worker", env),
      await spawnHookline("worker", env),
    );
    const api = clients(procs[0]?.address);
    await api.endpoints.createEndpoint({ tenantId: "t", id: "ep", url: receiver.url });
    for (let n = 0; n < 16; n++)
      await api.emit.emit({ tenantId: "t", eventId: `e${n}`, eventType: "x", dataJson: "{}" });
    await eventually(
      () => api.log.listDeliveries({ tenantId: "t", status: DeliveryStatus.DELIVERED, pageSize: 100 }),
      (r) => r.deliveries.length === 16,
    );
    // Each worker alone may run 2; together, without a shared cap, they would reach 4.
    assert.equal(receiver.state.maxInFlight, 2);
    assert.equal(new Set(receiver.state.ids).size, 16);
  } finally {
    for (const p of procs) await p.stop();
    await receiver.close();
    await backend.dispose();
  }
});

for (const queue of ["redis", "postgres"] as const) {
  test(`an endpoint's max_in_flight and rate limit hold across two worker processes (${queue} queue)`, {
    skip:
      !servers && "needs two worker processes on one PostgreSQL (the embedded store belongs to one process)",
  }, async () => {
    const backend = await createTestBackend(settings, "servers");
    const capped = await startSlowReceiver(150);
    const paced = await startSlowReceiver(0);
    const env: Record<string, string> = { ...backend.env, HOOKLINE_API_ADDR: "127.0.0.1:0" };
    if (queue === "postgres") delete env.REDIS_URL;
    const procs: HooklineProcess[] = [];
    try {
      procs.push(
        await spawnHookline("api", env),
        await spawnHookline("worker", env),
        await spawnHookline("worker", env),
      );
      const api = clients(procs[0]?.address);
      await api.endpoints.createEndpoint({ tenantId: "cap", id: "ep", url: capped.url, maxInFlight: 3 });
      await api.endpoints.createEndpoint({
        tenantId: "rate",
        id: "ep",
        url: paced.url,
        rateLimitPerSecond: 10,
      });
      const emitMany = (tenantId: string, count: number) =>
        Promise.all(
          Array.from({ length: count }, (_, n) =>
            api.emit.emit({ tenantId, eventId: `e${n}`, eventType: "x", dataJson: "{}" }),
          ),
        );
      await Promise.all([emitMany("cap", 24), emitMany("rate", 31)]);
      for (const [tenantId, count] of [
        ["cap", 24],
        ["rate", 31],
      ] as const) {
        await eventually(
          () => api.log.listDeliveries({ tenantId, status: DeliveryStatus.DELIVERED, pageSize: 100 }),
          (r) => r.deliveries.length === count,
          { timeoutMs: 30_000 },
        );
      }
      // Each worker alone may run 3 to one endpoint; together, without a shared cap, 6.
      assert.equal(capped.state.maxInFlight, 3);
      // 31 starts at 10/s take three seconds after the first; two workers each allowing 10/s, 1.5.
      const span = (paced.state.arrivals[30] ?? 0) - (paced.state.arrivals[0] ?? 0);
      assert.ok(span >= 2500, `31 starts at 10/s took ${span} ms`);
      assert.equal(new Set(paced.state.ids).size, 31);
    } finally {
      for (const p of procs) await p.stop();
      await capped.close();
      await paced.close();
      await backend.dispose();
    }
  });
}

test("SIGTERM lets in-flight attempts finish; after a restart every delivery is delivered", async () => {
  const backend = await createTestBackend(settings);
  const receiver = await startSlowReceiver(200);
  const env = { ...backend.env, HOOKLINE_API_ADDR: "127.0.0.1:0", HOOKLINE_DISCOVERY_INTERVAL: "200ms" };
  // Embedded: the one process is both; on servers the worker is stopped while the api keeps serving.
  const start = () => spawnHookline(servers ? "worker" : "standalone", env);
  const api = servers ? await spawnHookline("api", env) : undefined;
  let worker = await start();
  try {
    let rpc = clients((api ?? worker).address);
    // One in flight at 200 ms each: ten deliveries take two seconds, so the stop comes mid-run however
    // fast the service picks jobs up (adaptive concurrency could have all ten in flight at once).
    await rpc.endpoints.createEndpoint({ tenantId: "t", id: "ep", url: receiver.url, maxInFlight: 1 });
    for (let n = 0; n < 10; n++)
      await rpc.emit.emit({ tenantId: "t", eventId: `e${n}`, eventType: "x", dataJson: "{}" });
    await eventually(
      async () => receiver.state.inFlight,
      (n) => n > 0,
    );
    const inFlightAtStop = receiver.state.inFlight;
    assert.equal(await worker.stop(), 0, "a clean exit");
    assert.equal(receiver.state.inFlight, 0, "it waited for the attempts in flight");
    const seenBeforeRestart = receiver.state.ids.length;
    assert.ok(seenBeforeRestart < 10, "the stop came mid-run");
    worker = await start();
    rpc = clients((api ?? worker).address);
    const { deliveries } = await eventually(
      () => rpc.log.listDeliveries({ tenantId: "t", pageSize: 100 }),
      (r) => r.deliveries.length === 10 && r.deliveries.every((d) => d.status === DeliveryStatus.DELIVERED),
    );
    assert.ok(
      deliveries.every((d) => d.attemptCount === 1),
      "no attempt was lost or repeated",
    );
    assert.equal(new Set(receiver.state.ids).size, 10);
    assert.equal(
      receiver.state.ids.length,
      10,
      `each sent once (${inFlightAtStop} were in flight at SIGTERM)`,
    );
  } finally {
    await worker.stop();
    await api?.stop();
    await receiver.close();
    await backend.dispose();
  }
});

for (const queue of ["redis", "postgres"] as const) {
  test(`an attempt recorded by a worker process streams to a client of a separate api process (${queue} queue)`, {
    skip:
      !servers &&
      "the embedded default is one process; in-process streaming is covered by watch-attempts.test.ts",
  }, async () => {
    const backend = await createTestBackend(settings, "servers");
    const receiver = await startSlowReceiver(0);
    const env: Record<string, string> = { ...backend.env, HOOKLINE_API_ADDR: "127.0.0.1:0" };
    if (queue === "postgres") delete env.REDIS_URL;
    const procs: HooklineProcess[] = [];
    const controller = new AbortController();
    try {
      // With the api's safety poll off, only the worker's NOTIFY can bring the attempt.
      procs.push(
        await spawnHookline("api", { ...env, HOOKLINE_WATCH_POLL_INTERVAL: "1h" }),
        await spawnHookline("worker", env),
      );
      const api = clients(procs[0]?.address);
      await api.endpoints.createEndpoint({ tenantId: "t", id: "ep", url: receiver.url });
      const stream = api.log
        .watchAttempts({ tenantId: "t" }, { signal: controller.signal })
        [Symbol.asyncIterator]();
      const first = stream.next();
      await api.emit.emit({ tenantId: "t", eventId: "cross", eventType: "x", dataJson: "{}" });
      const { value } = await first;
      assert.equal(value?.attempt?.eventId, "cross");
      assert.equal(value?.attempt?.responseStatus, 200);
    } finally {
      controller.abort();
      for (const p of procs) await p.stop();
      await receiver.close();
      await backend.dispose();
    }
  });
}
