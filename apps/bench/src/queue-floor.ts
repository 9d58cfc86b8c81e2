import { randomBytes } from "node:crypto";
import {
  DeliveryConsumer,
  DeliveryProducer,
  type EndpointRef,
  openQueueBackend,
  QueueRouting,
} from "@hookline/queue";
import type { TestSettings } from "@hookline/testkit";
import { cpuBetween, sampleCpu } from "./cpu.js";
import { type Counters, difference, redisCounters } from "./server-stats.js";

/** What one job costs BullMQ on Redis, split by where it is paid. */
export interface QueueFloorPart {
  /** CPU of the Node process that adds or takes the jobs, µs per job. */
  nodeUs: number;
  /** Every Redis process's CPU, µs per job. */
  redisUs: number;
  redisCommands: number;
}

export interface QueueFloor {
  jobs: number;
  queues: number;
  add: QueueFloorPart;
  take: QueueFloorPart;
}

/**
 * BullMQ alone on Redis, driven by Hookline's own queue code: jobs added through DeliveryProducer
 * (the options, priorities and batched adds every Emit uses: Queue.addBulk per queue, `inFlight` callers of
 * one job per endpoint at a time, as Emits are), then taken by DeliveryConsumer (a Worker per
 * endpoint queue, the worker's lock settings) with a processor that does nothing. No HTTP, no
 * store: since the design adds one BullMQ job per delivery, this is a floor under what every
 * delivery costs, whatever Hookline does around it.
 */
export async function measureQueueFloor(
  settings: TestSettings,
  options: { events: number; endpoints: number; inFlight: number; concurrency: number },
): Promise<QueueFloor> {
  const backend = await openQueueBackend({
    kind: "redis",
    redis: settings.redis,
    prefix: `floor${randomBytes(4).toString("hex")}`,
  });
  const limits = { maxInFlight: options.concurrency };
  const producer = new DeliveryProducer(backend, new QueueRouting(0, limits));
  const endpoints: EndpointRef[] = Array.from({ length: options.endpoints }, (_, i) => ({
    tenantId: "floor",
    endpointId: `ep${i}`,
  }));
  const jobs = options.events * options.endpoints;
  const redisTargets = { redis: { command: "redis-server" } };
  const measure = async <T>(work: () => Promise<T>): Promise<QueueFloorPart> => {
    const commandsBefore = await redisCounters(settings.redis.host, settings.redis.port);
    const redisBefore = sampleCpu(redisTargets);
    const nodeBefore = process.cpuUsage();
    await work();
    const node = process.cpuUsage(nodeBefore);
    const redisSeconds = cpuBetween(redisBefore, sampleCpu(redisTargets)).get("redis") ?? 0;
    const commands: Counters = difference(
      commandsBefore,
      await redisCounters(settings.redis.host, settings.redis.port),
    );
    return {
      nodeUs: (node.user + node.system) / jobs,
      redisUs: (redisSeconds * 1e6) / jobs,
      // Less the INFO that read the first counters (Redis counts a command after it ran).
      redisCommands: ((commands.get("total") ?? 0) - 1) / jobs,
    };
  };
  // One event's jobs at a time from each of inFlight callers, as concurrent Emits add them.
  const addEvents = async (prefix: string, count: number) => {
    let next = 0;
    const caller = async () => {
      while (next < count) {
        const event = next++;
        await producer.enqueue(
          endpoints.map((endpoint) => ({
            ...endpoint,
            deliveryId: `dl_${prefix}${event}_${endpoint.endpointId}`,
            attemptNumber: 1,
          })),
        );
      }
    };
    await Promise.all(Array.from({ length: options.inFlight }, caller));
  };
  let consumer: DeliveryConsumer | undefined;
  // A consumer of its own per phase, closed at the end of it, so adding and taking are apart.
  const takeAll = async (count: number) => {
    let taken = 0;
    let allTaken = () => {};
    const done = new Promise<void>((resolve) => {
      allTaken = resolve;
    });
    consumer = new DeliveryConsumer(
      backend,
      async () => {
        taken += 1;
        if (taken === count) allTaken();
      },
      { maxOpenQueues: options.endpoints, idleCloseMs: 2_000, turnMs: 2_000, stalledAfterMs: 15_000 },
      producer,
    );
    const now = Date.now();
    consumer.demand(
      endpoints.map((endpoint) => ({
        queue: producer.routing.queueOf(endpoint),
        dueAt: now,
        limits,
        endpoint,
      })),
    );
    await done;
    await consumer.close();
    consumer = undefined;
  };
  try {
    // Not measured: warms the JIT on both paths, as Hookline's runs have a warm-up.
    const warmup = Math.min(100, options.events);
    await addEvents("warm", warmup);
    await takeAll(warmup * options.endpoints);
    const add = await measure(() => addEvents("", options.events));
    const take = await measure(() => takeAll(jobs));
    return { jobs, queues: options.endpoints, add, take };
  } finally {
    await consumer?.close();
    for (const endpoint of endpoints) await producer.discard(endpoint).catch(() => {});
    await producer.close();
    await backend.close();
  }
}
