import {
  closeWorker,
  openQueueBackend,
  openWorker,
  type QueueBackendOptions,
  type WorkerActivity,
} from "@hookline/queue";
import type { Job, Worker } from "bullmq";
import pg from "pg";
import { Webhook } from "standardwebhooks";
import { Agent, request } from "undici";
import type { ReferenceJob } from "./emitter.js";

// The reference design's worker, in its own process (as Hookline's is): one BullMQ Worker per
// endpoint queue at a fixed concurrency. Each job reads its delivery, signs with standardwebhooks,
// POSTs on a keep-alive connection, and writes one attempt row while marking the delivery.
// Forked by the bench with its settings as JSON in argv[2]; exits when the bench goes away.

export interface ReferenceWorkerSettings {
  databaseUrl: string;
  queue: QueueBackendOptions;
  endpointIds: string[];
  concurrency: number;
}

const settings = JSON.parse(process.argv[2] ?? "{}") as ReferenceWorkerSettings;
const pool = new pg.Pool({ connectionString: settings.databaseUrl, max: 10 });
pool.on("error", () => {}); // an idle connection dropped at the end (the bench drops the database)
const agent = new Agent({ keepAliveTimeout: 60_000 });
const signers = new Map<string, Webhook>();

async function deliver(job: Job<ReferenceJob>): Promise<void> {
  const { deliveryId } = job.data;
  const { rows } = await pool.query(
    `select d.event_id, e.type, e.data, e.created_at, n.id as endpoint_id, n.url, n.secret
       from deliveries d join events e on e.id = d.event_id join endpoints n on n.id = d.endpoint_id
      where d.id = $1`,
    [deliveryId],
  );
  const row = rows[0] as
    | {
        event_id: string;
        type: string;
        data: string;
        created_at: Date;
        endpoint_id: string;
        url: string;
        secret: string;
      }
    | undefined;
  if (!row) throw new Error(`delivery ${deliveryId} not found`);
  const body = JSON.stringify({
    type: row.type,
    timestamp: row.created_at.toISOString(),
    data: JSON.parse(row.data),
  });
  const signer = signers.get(row.endpoint_id) ?? new Webhook(row.secret);
  signers.set(row.endpoint_id, signer);
  const startedAt = new Date();
  const headers = {
    "content-type": "application/json",
    "webhook-id": row.event_id,
    "webhook-timestamp": String(Math.floor(startedAt.getTime() / 1000)),
    "webhook-signature": signer.sign(row.event_id, startedAt, body),
  };
  let statusCode: number | null = null;
  let error: string | null = null;
  try {
    const response = await request(row.url, { dispatcher: agent, method: "POST", headers, body });
    statusCode = response.statusCode;
    await response.body.dump();
  } catch (failure) {
    error = failure instanceof Error ? failure.message : String(failure);
  }
  const ok = statusCode !== null && statusCode >= 200 && statusCode < 300;
  const number = job.attemptsMade + 1;
  const status = ok ? "delivered" : number >= (job.opts.attempts ?? 1) ? "failed" : "pending";
  await pool.query(
    `with a as (insert into attempts (delivery_id, number, started_at, duration_ms, status_code, error)
                values ($1, $2, $3, $4, $5, $6))
     update deliveries set status = $7, attempts = $2 where id = $1`,
    [deliveryId, number, startedAt, Date.now() - startedAt.getTime(), statusCode, error, status],
  );
  if (!ok) throw new Error(error ?? `endpoint answered ${statusCode}`); // BullMQ schedules the retry
}

/** How long after its last job a Worker that has not closed is given up on: Hookline's default. */
const CLOSE_GRACE_MS = 5_000;

const backend = await openQueueBackend(settings.queue);
// Each Worker with the count closeWorker waits on, kept as Hookline's consumer keeps it.
const workers: { worker: Worker<ReferenceJob>; activity: WorkerActivity }[] = settings.endpointIds.map(
  (id) => {
    const activity: WorkerActivity = { inFlight: 0, lastBusyAt: Date.now() };
    const worker = openWorker<ReferenceJob>(
      backend,
      id,
      async (job) => {
        activity.inFlight += 1;
        try {
          await deliver(job);
        } finally {
          activity.inFlight -= 1;
          activity.lastBusyAt = Date.now();
        }
      },
      { concurrency: settings.concurrency },
    );
    return { worker, activity };
  },
);
await Promise.all(workers.map(({ worker }) => worker.waitUntilReady()));
process.send?.({ type: "ready" });
process.on("disconnect", async () => {
  // Not worker.close(): after a Redis blip it can wait forever (bullmq issue 4656); closeWorker
  // waits for the blocking client to be back, and gives up once the Worker's jobs are done.
  const outcomes = await Promise.all(
    workers.map(({ worker, activity }) => closeWorker(backend, worker, activity, CLOSE_GRACE_MS)),
  );
  if (outcomes.includes("still-closing"))
    process.stderr.write(
      `reference worker: a BullMQ Worker had not closed ${CLOSE_GRACE_MS} ms after its last job; exiting anyway\n`,
    );
  await backend.close();
  await pool.end();
  await agent.close();
  process.exit(0);
});
