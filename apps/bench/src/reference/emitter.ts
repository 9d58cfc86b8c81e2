import { randomUUID } from "node:crypto";
import type { Queue } from "bullmq";
import type pg from "pg";

/** What a reference job carries: the delivery id, nothing else. */
export interface ReferenceJob {
  deliveryId: string;
}

/** BullMQ's own retry, the reference design's: 5 attempts, exponential from 1 s. */
const JOB_OPTIONS = { attempts: 5, backoff: { type: "exponential", delay: 1000 }, removeOnComplete: true };

/**
 * The reference Emit: the event and one delivery per endpoint in one statement (one transaction),
 * then one job per delivery on the endpoint's queue, with the delivery id as the job id.
 */
export async function emitReference(
  pool: pg.Pool,
  queues: ReadonlyMap<string, Queue<ReferenceJob>>,
  event: { id: string; type: string; data: string },
): Promise<number> {
  const endpointIds = [...queues.keys()];
  const deliveryIds = endpointIds.map(() => `dlv_${randomUUID()}`);
  await pool.query(
    `with e as (insert into events (id, type, data) values ($1, $2, $3))
     insert into deliveries (id, event_id, endpoint_id, status)
     select d, $1, ep, 'pending' from unnest($4::text[], $5::text[]) as t(d, ep)`,
    [event.id, event.type, event.data, deliveryIds, endpointIds],
  );
  await Promise.all(
    deliveryIds.map((deliveryId, i) =>
      queues.get(endpointIds[i] ?? "")?.add("deliver", { deliveryId }, { ...JOB_OPTIONS, jobId: deliveryId }),
    ),
  );
  return deliveryIds.length;
}
