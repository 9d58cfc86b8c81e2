import type { HooklineConfig } from "@hookline/config";
import {
  DeliveryProducer,
  type FedQueue,
  openQueueBackend,
  type QueueBackend,
  QueueRouting,
} from "@hookline/queue";
import { CHANNELS, connectStore, notify, type StoreConnection } from "@hookline/store";
import type { Logger } from "./logger.js";
import { encodeWorkNews } from "./work-news.js";

/** Where an adaptive limit starts before any worker has learned one: twice the old fixed default. */
const ADAPTIVE_START = 4;

/** The store, the queue backend and a producer: what both the api and the worker stand on. */
export interface Infrastructure {
  store: StoreConnection;
  queueBackend: QueueBackend;
  producer: DeliveryProducer;
  /**
   * Hears of jobs this process's producer added (a worker in this process opens their queues).
   * On a real PostgreSQL the news also goes to other processes, on CHANNELS.work.
   */
  onFed(listener: (fed: FedQueue[]) => void): void;
  close(): Promise<void>;
}

/**
 * Queues one worker process serves at once: HOOKLINE_WORKER_QUEUES, else 64 on Redis (one
 * blocking connection each) and 8 on PostgreSQL, whose connections cost a server process each.
 */
export function workerQueuesOf(config: HooklineConfig): number {
  return config.queue.workerQueues ?? (config.redis ? 64 : 8);
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
    const listeners: ((fed: FedQueue[]) => void)[] = [];
    const { endpointConcurrency, endpointMaxConcurrency } = config.queue;
    const routing = new QueueRouting(
      config.queue.lanes,
      endpointConcurrency === "adaptive"
        ? { maxInFlight: Math.min(ADAPTIVE_START, endpointMaxConcurrency), adaptive: true }
        : { maxInFlight: endpointConcurrency },
    );
    const producer = new DeliveryProducer(queueBackend, routing, {
      onFed: (fed) => {
        for (const listener of listeners) listener(fed);
        // Embedded PGlite is one process: nobody else to tell.
        if (store.embedded) return;
        notify(store.db, CHANNELS.work, encodeWorkNews(fed)).catch((error: Error) =>
          log.warn("work signal failed; workers find the jobs on their next scan", { error: error.message }),
        );
      },
    });
    return {
      store,
      queueBackend,
      producer,
      onFed: (listener) => listeners.push(listener),
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
