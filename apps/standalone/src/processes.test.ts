import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
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
} from "@hookline/testkit";

const settings = readTestSettings(process.env);

/** A receiver that answers after delayMs and tracks how many requests it holds at once. */
async function slowReceiver(delayMs: number) {
  const state = { inFlight: 0, maxInFlight: 0, ids: [] as string[] };
  const server = http.createServer((req, res) => {
    state.inFlight += 1;
    state.maxInFlight = Math.max(state.maxInFlight, state.inFlight);
    state.ids.push(String(req.headers["webhook-id"]));
    req.resume();
    setTimeout(() => {
      state.inFlight -= 1;
      res.end("ok");
    }, delayMs);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    state,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

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
  const receiver = await slowReceiver(100);
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

test("SIGTERM lets in-flight attempts finish; after a restart every delivery is delivered", async () => {
  const backend = await createTestBackend(settings);
  const receiver = await slowReceiver(200);
  const env = { ...backend.env, HOOKLINE_API_ADDR: "127.0.0.1:0", HOOKLINE_DISCOVERY_INTERVAL: "200ms" };
  // Embedded: the one process is both; on servers the worker is stopped while the api keeps serving.
  const start = () => spawnHookline(servers ? "worker" : "standalone", env);
  const api = servers ? await spawnHookline("api", env) : undefined;
  let worker = await start();
  try {
    let rpc = clients((api ?? worker).address);
    await rpc.endpoints.createEndpoint({ tenantId: "t", id: "ep", url: receiver.url });
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
    const receiver = await slowReceiver(0);
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
