import type { HooklineConfig } from "@hookline/config";
import { DeliveryProducer, openQueueBackend, type QueueBackend } from "@hookline/queue";
import { connectStore, type StoreConnection } from "@hookline/store";
import type { Logger } from "./logger.js";

/** The store, the queue backend and a producer: what both the api and the worker stand on. */
export interface Infrastructure {
  store: StoreConnection;
  queueBackend: QueueBackend;
  producer: DeliveryProducer;
  close(): Promise<void>;
}

/** Opens the store (migrating it) and BullMQ on Redis, or on the store's own PostgreSQL. */
export async function openInfrastructure(config: HooklineConfig, log: Logger): Promise<Infrastructure> {
  const store = await connectStore(
    config.databaseUrl ? { databaseUrl: config.databaseUrl } : { dataDir: config.dataDir },
    { onError: (error) => log.warn("database connection error", { error: error.message }) },
  );
  try {
    const queueBackend = await openQueueBackend(
      config.redis
        ? { kind: "redis", redis: config.redis, prefix: config.queue.prefix }
        : {
            kind: "postgres",
            pg: store.pgConfig,
            embedded: store.embedded,
            pollIntervalMs: config.queue.pollIntervalMs,
          },
    );
    const producer = new DeliveryProducer(queueBackend, {
      lanes: config.queue.lanes,
      endpointConcurrency: config.queue.endpointConcurrency,
    });
    return {
      store,
      queueBackend,
      producer,
      async close() {
        await producer.close();
        await queueBackend.close();
        await store.close();
      },
    };
  } catch (error) {
    await store.close();
    throw error;
  }
}
