import type { HooklineConfig } from "@hookline/config";
import { DeliveryProducer, openQueueBackend, type QueueBackend, QueueRouting } from "@hookline/queue";
import { connectStore, type StoreConnection } from "@hookline/store";
import type { ChangeSignals } from "./change-signals.js";
import { inProcessSignals } from "./in-process-signals.js";
import type { Logger } from "./logger.js";
import { postgresSignals } from "./postgres-signals.js";

/** Where an adaptive limit starts before any worker has learned one: twice the old fixed default. */
const ADAPTIVE_START = 4;

/** The store, the queue backend, a producer and the change signals: what the api and the worker stand on. */
export interface Infrastructure {
  store: StoreConnection;
  queueBackend: QueueBackend;
  producer: DeliveryProducer;
  /** News between the parts of Hookline; the producer publishes workFed for the jobs it adds. */
  signals: ChangeSignals;
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
    {
      timeoutMs: config.databaseTimeoutMs,
      onError: (error) => log.warn("database connection error", { error: error.message }),
    },
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
    // Chosen once, here: NOTIFY/LISTEN reaches every process on a real PostgreSQL; embedded PGlite
    // belongs to one process, where signals need no round trip through the database.
    const signals = store.embedded ? inProcessSignals() : postgresSignals(store, log);
    const { endpointConcurrency, endpointMaxConcurrency } = config.queue;
    const routing = new QueueRouting(
      config.queue.lanes,
      endpointConcurrency === "adaptive"
        ? { maxInFlight: Math.min(ADAPTIVE_START, endpointMaxConcurrency), adaptive: true }
        : { maxInFlight: endpointConcurrency },
    );
    const producer = new DeliveryProducer(queueBackend, routing, {
      onFed: (fed) => signals.workFed.publish(fed),
    });
    return {
      store,
      queueBackend,
      producer,
      signals,
      async close() {
        await producer.close();
        await queueBackend.close();
        await signals.close();
        await store.close();
      },
    };
  } catch (error) {
    await store.close();
    throw error;
  }
}
