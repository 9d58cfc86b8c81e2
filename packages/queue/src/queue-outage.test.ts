import assert from "node:assert/strict";
import { once } from "node:events";
import net from "node:net";
import { test } from "node:test";
import { createTestBackend, readTestSettings } from "@hookline/testkit";
import {
  DeliveryProducer,
  openQueueBackend,
  QueueRouting,
  QueueUnavailableError,
  type RedisBackend,
} from "./index.js";

const settings = readTestSettings(process.env);

/** The real Redis behind a TCP relay that can be made to refuse connections or go silent. */
async function relayTo(target: { host: string; port: number }) {
  const sockets = new Set<net.Socket>();
  let silent = false;
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("error", () => {});
      socket.on("close", () => sockets.delete(socket));
    }
    client.on("data", (data) => silent || upstream.write(data));
    upstream.on("data", (data) => silent || client.write(data));
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as net.AddressInfo;
  return {
    port,
    /** Connections stay open, and nothing passes: a partition, or a Redis that hangs. */
    goSilent: () => {
      silent = true;
    },
    /** Every connection is cut and new ones refused: Redis is down. */
    goDown: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
    comeBack: async () => {
      silent = false;
      server.listen(port, "127.0.0.1");
      await once(server, "listening");
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      if (server.listening) await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const job = (n: number) => ({
  tenantId: "t",
  endpointId: "ep",
  deliveryId: `dl_outage_${n}`,
  attemptNumber: 1,
});

test("while Redis is unreachable an enqueue fails at once, and within its timeout while Redis is silent", {
  skip: settings.kind !== "servers" && "the embedded run has no Redis",
}, async () => {
  const backend = await createTestBackend(settings);
  const redis = backend.redis ?? assert.fail("the servers run has Redis");
  const relay = await relayTo(redis);
  const queues = (await openQueueBackend({
    kind: "redis",
    redis: { ...redis, host: "127.0.0.1", port: relay.port },
    prefix: backend.prefix,
  })) as RedisBackend;
  const producer = new DeliveryProducer(queues, new QueueRouting(0, { maxInFlight: 2 }), {
    addTimeoutMs: 300,
  });
  try {
    await producer.enqueue([job(1)]);

    relay.goSilent();
    let started = performance.now();
    await assert.rejects(producer.enqueue([job(2)]), QueueUnavailableError);
    const silentFor = performance.now() - started;
    // Before, the add waited for Redis to answer again, however long that took.
    assert.ok(silentFor >= 290 && silentFor < 2000, `gave up after ${Math.round(silentFor)} ms`);

    const reconnecting = once(queues.connection, "reconnecting");
    await relay.goDown();
    await reconnecting;
    started = performance.now();
    await assert.rejects(producer.enqueue([job(3)]), /unreachable/);
    // What GetEndpoint reads from the queue: it answers without it rather than wait.
    await assert.rejects(producer.currentLimit({ tenantId: "t", endpointId: "ep" }), QueueUnavailableError);
    assert.ok(performance.now() - started < 100, "no wait for a connection that is not there");

    const ready = once(queues.connection, "ready");
    await relay.comeBack();
    await ready;
    await producer.enqueue([job(4)]);
  } finally {
    await producer.close();
    await queues.close();
    await relay.close();
    await backend.dispose();
  }
});
