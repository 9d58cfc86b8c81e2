import { fork } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { openQueueBackend, openQueueHandle, type QueueBackendOptions } from "@hookline/queue";
import { createTestBackend, type TestSettings } from "@hookline/testkit";
import type { Queue } from "bullmq";
import pg from "pg";
import { track } from "../children.js";
import { type CpuTargets, watchCpu } from "../cpu.js";
import { DATA_JSON } from "../emit-load.js";
import type { ReceiverHandle } from "../receiver.js";
import { MACHINE } from "../report.js";
import { log, referenceEnv } from "../run-support.js";
import type { ThroughputRun } from "../throughput.js";
import { emitReference, type ReferenceJob } from "./emitter.js";
import { createReferenceSchema, pendingReferenceDeliveries } from "./schema.js";
import type { ReferenceWorkerSettings } from "./worker-process.js";

/** Where the reference design keeps its queues: rows are always in real PostgreSQL. */
export type ReferenceQueue = "redis" | "postgres";

const WORKER = fileURLToPath(new URL("./worker-process.js", import.meta.url));
const WARMUP_EVENTS = 100;

/**
 * Runs the reference design on a database of its own: a warm-up, then `events` events to
 * `endpoints` endpoints with `inFlight` emits outstanding, timed from the first emit to no
 * delivery pending. Both emitter and worker use the same receiver as Hookline.
 */
export async function runReference(
  settings: TestSettings,
  queue: ReferenceQueue,
  options: { events: number; endpoints: number; inFlight: number; concurrency: number },
  receiver: ReceiverHandle,
): Promise<ThroughputRun> {
  const backend = await createTestBackend(settings, "servers");
  const databaseUrl = backend.databaseUrl ?? "";
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 8 });
  pool.on("error", () => {}); // errors surface on the queries; an idle client's must not crash the bench
  const queueOptions: QueueBackendOptions =
    queue === "redis"
      ? { kind: "redis", redis: settings.redis, prefix: backend.prefix }
      : { kind: "postgres", pg: { connectionString: databaseUrl }, embedded: false, pollIntervalMs: 100 };
  const queues = await openQueueBackend(queueOptions);
  const handles = new Map<string, Queue<ReferenceJob>>();
  let stopWorker = async () => {};
  try {
    const endpointIds = await createReferenceSchema(pool, receiver.url, options.endpoints);
    for (const id of endpointIds) handles.set(id, openQueueHandle<ReferenceJob>(queues, id));
    const worker = await startWorker(
      { databaseUrl, queue: queueOptions, endpointIds, concurrency: options.concurrency },
      referenceEnv(backend.env),
    );
    stopWorker = worker.stop;
    log(
      `reference worker ready (BullMQ on ${queue === "redis" ? "Redis" : "PostgreSQL"}, concurrency ${options.concurrency})`,
    );

    const emitAll = async (prefix: string, count: number) => {
      let next = 0;
      const lane = async () => {
        while (next < count) {
          const i = next++;
          await emitReference(pool, handles, { id: `${prefix}-${i}`, type: "invoice.paid", data: DATA_JSON });
        }
      };
      await Promise.all(Array.from({ length: Math.min(options.inFlight, count) }, lane));
    };
    const settle = async () => {
      while ((await pendingReferenceDeliveries(pool)) > 0) await new Promise((r) => setTimeout(r, 25));
      return performance.timeOrigin + performance.now();
    };

    const warmup = Math.min(WARMUP_EVENTS, options.events);
    await receiver.reset();
    await emitAll("warm", warmup);
    await receiver.waitFor(warmup * options.endpoints);
    await settle();
    await receiver.reset();

    const expected = options.events * options.endpoints;
    const targets: CpuTargets = {
      "reference worker": { pids: [worker.pid] },
      receiver: { pids: [receiver.pid] },
      bench: { pids: [process.pid] },
      "postgres*": { command: "postgres" },
      ...(queue === "redis" && { "redis*": { command: "redis-server" } }),
      [MACHINE]: { machine: true },
    };
    log(`emitting ${options.events} events to ${options.endpoints} endpoints (${expected} deliveries)`);
    const reached = receiver.waitFor(expected);
    reached.catch(() => {});
    const cpuWindow = watchCpu(targets);
    const startedAt = performance.timeOrigin + performance.now();
    await emitAll("evt", options.events);
    await reached;
    const settledAt = await settle();
    const cpu = cpuWindow.stop();

    const { rows } = await pool.query<{ delivered: string; attempts: string }>(
      `select (select count(*) from deliveries where status = 'delivered') as delivered,
              (select count(*) from attempts) as attempts`,
    );
    const total = (options.events + warmup) * options.endpoints;
    if (Number(rows[0]?.delivered) !== total || Number(rows[0]?.attempts) !== total)
      throw new Error(
        `reference: ${rows[0]?.delivered} delivered, ${rows[0]?.attempts} attempt rows; expected ${total} of each`,
      );
    return {
      label: `reference, BullMQ on ${queue === "redis" ? "Redis" : "PostgreSQL"}`,
      deliveries: expected,
      seconds: (settledAt - startedAt) / 1000,
      cpu,
    };
  } finally {
    await stopWorker();
    await Promise.all([...handles.values()].map((handle) => handle.close()));
    await queues.close();
    await pool.end();
    await backend.dispose();
  }
}

/**
 * Forks the reference worker and waits until every queue's Worker is consuming. Like Hookline's
 * processes (spawnHookline), it gets exactly env and no node flags of the bench's (fork would
 * pass on both), so the shell's environment weighs on neither side or on both.
 */
async function startWorker(settings: ReferenceWorkerSettings, env: Record<string, string>) {
  const child = fork(WORKER, [JSON.stringify(settings)], {
    env,
    execArgv: [],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const exited = once(child, "exit");
  const stop = async () => {
    forget();
    if (child.connected) child.disconnect();
    if (child.exitCode === null && child.signalCode === null) await exited;
  };
  const forget = track(child, stop);
  await Promise.race([
    once(child, "message"),
    exited.then(([code]) =>
      Promise.reject(new Error(`the reference worker exited (${code}) before it was ready`)),
    ),
  ]);
  return { pid: child.pid ?? 0, stop };
}
