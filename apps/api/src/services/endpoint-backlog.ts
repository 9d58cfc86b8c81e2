import { cancelPendingOf, type DeletedEndpoint, type FailedSince, reopenFailedPage } from "@hookline/store";
import type { ApiDeps } from "../deps.js";
import { enqueueCommitted } from "./enqueue-committed.js";

/**
 * Reopens the endpoint's failed deliveries since a time and queues their attempts, a page at a
 * time: each page is committed, then queued, before the next is read. So memory and each
 * statement stay small however large the backlog, and Emit calls that arrive meanwhile are queued
 * between two pages instead of behind all of them. A cancelled call stops between pages: what it
 * reopened is queued, the rest is still failed, and calling again requeues what is failed then.
 * Returns how many were requeued.
 */
export async function requeueFailed(
  deps: Pick<ApiDeps, "db" | "producer" | "log">,
  target: FailedSince,
  now: Date,
  signal: AbortSignal,
): Promise<number> {
  let requeued = 0;
  let after: string | undefined;
  do {
    const page = await reopenFailedPage(deps.db, target, after, now);
    await enqueueCommitted(
      deps,
      page.reopened.map((d) => ({
        deliveryId: d.id,
        tenantId: d.tenantId,
        endpointId: d.endpointId,
        attemptNumber: d.attemptCount + 1,
        manual: true,
      })),
      { endpointId: target.endpointId },
    );
    requeued += page.reopened.length;
    after = page.after;
  } while (after !== undefined && !signal.aborted);
  return requeued;
}

/**
 * Cancels a deleted endpoint's pending deliveries before DeleteEndpoint answers. The endpoint is
 * gone either way, so a failure here is logged, not answered: what is left is cancelled by the
 * worker that takes it (its endpoint is gone), or at its due time by the sweeper when its job was
 * discarded with the queue.
 */
export async function cancelDeletedBacklog(
  deps: Pick<ApiDeps, "db" | "log">,
  endpoint: DeletedEndpoint,
  now: Date,
): Promise<void> {
  await cancelPendingOf(deps.db, endpoint, now).catch((error: unknown) =>
    deps.log.warn("could not cancel every pending delivery of a deleted endpoint; the rest at their turn", {
      tenantId: endpoint.tenantId,
      endpointId: endpoint.endpointId,
      error: error instanceof Error ? error.message : String(error),
    }),
  );
}
