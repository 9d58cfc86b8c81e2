import assert from "node:assert/strict";
import { once } from "node:events";
import net from "node:net";
import { connectStore, type StoreConnection } from "@hookline/store";
import { createTestBackend, type TestBackend, type TestSettings } from "@hookline/testkit";
import { openQueueBackend, type QueueBackend, type RedisBackend } from "./backend.js";
import { DeliveryProducer, type ProducerOptions } from "./producer.js";
import type { QueueRouting } from "./routing.js";

/** The real Redis behind a TCP relay that can be made to refuse connections or go silent. */
export async function relayTo(target: { host: string; port: number }) {
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

/** The next time the connection emits this (events.once would reject on its connection errors). */
export const next = (queues: RedisBackend, event: "reconnecting" | "ready") =>
  new Promise<void>((resolve) => queues.connection.once(event, () => resolve()));

/** A test's own Redis keys, reached through a relay that can cut the queue backend off. */
export async function queuesBehindRelay(settings: TestSettings) {
  const backend = await createTestBackend(settings);
  const redis = backend.redis ?? assert.fail("the servers run has Redis");
  const relay = await relayTo(redis);
  const queues = (await openQueueBackend({
    kind: "redis",
    redis: { ...redis, host: "127.0.0.1", port: relay.port },
    prefix: backend.prefix,
  })) as RedisBackend;
  return {
    backend,
    redis,
    relay,
    queues,
    async dispose() {
      await queues.close();
      await relay.close();
      await backend.dispose();
    },
  };
}

/**
 * A test's queues on the run's backend: its own Redis keys, or BullMQ's PostgreSQL backend on an
 * embedded store (polling every 50 ms), with a producer over them.
 */
export async function openTestQueues(
  settings: TestSettings,
  routing: QueueRouting,
  producerOptions: ProducerOptions = {},
): Promise<{
  backend: TestBackend;
  store: StoreConnection;
  queues: QueueBackend;
  producer: DeliveryProducer;
  dispose(): Promise<void>;
}> {
  const backend = await createTestBackend(settings);
  const store = await connectStore(
    backend.databaseUrl ? { databaseUrl: backend.databaseUrl } : { dataDir: null },
  );
  const queues = await openQueueBackend(
    backend.redis
      ? { kind: "redis", redis: backend.redis, prefix: backend.prefix }
      : { kind: "postgres", pg: store.pgConfig, embedded: true, pollIntervalMs: 50 },
  );
  const producer = new DeliveryProducer(queues, routing, producerOptions);
  return {
    backend,
    store,
    queues,
    producer,
    async dispose() {
      await producer.close();
      await queues.close();
      await store.close();
      await backend.dispose();
    },
  };
}
