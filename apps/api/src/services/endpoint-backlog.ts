import { Code, ConnectError } from "@connectrpc/connect";
import {
  cancelPendingOf,
  type DeletedEndpoint,
  type FailedSince,
  findEndpoint,
  reopenFailedPage,
} from "@hookline/store";
import type { ApiDeps } from "../deps.js";
import { enqueueCommitted } from "./enqueue-committed.js";

/**
 * Reopens the endpoint's failed deliveries since a time and queues their attempts, a page at a
 * time: each page is committed, then queued, before the next is read. So memory and each
 * statement stay small however large the backlog, and Emit calls that arrive meanwhile are queued
 * between two pages instead of behind all of them. A cancelled call stops between pages: what it
 * reopened is queued, the rest is still failed, and calling again requeues what is failed then.
 * Returns how many were requeued; an api shutting down stops it the same way and answers
 * UNAVAILABLE, saying how many, so the caller knows to call again.
 */
export async function requeueFailed(
  deps: Pick<ApiDeps, "db" | "producer" | "log" | "stopping">,
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
  } while (after !== undefined && !signal.aborted && !deps.stopping.aborted);
  if (after !== undefined && deps.stopping.aborted) {
    throw new ConnectError(
      `the api is shutting down: ${requeued} failed deliveries were requeued; call again for the rest`,
      Code.Unavailable,
    );
  }
  return requeued;
}

/**
 * Cancels a deleted endpoint's pending deliveries before DeleteEndpoint answers, then removes its
 * queue. The endpoint is gone either way, so a failure here is logged, not answered. What is left
 * pending keeps its job (the queue is removed only once every delivery is cancelled), and the
 * worker that takes it cancels it, its endpoint being gone: so it is when the api shuts down
 * meanwhile, which stops the cancel at its next page and lets the call answer.
 */
export async function cancelDeletedBacklog(
  deps: Pick<ApiDeps, "db" | "producer" | "log" | "stopping" | "onCancelled">,
  endpoint: DeletedEndpoint,
  now: Date,
): Promise<void> {
  const fields = { tenantId: endpoint.tenantId, endpointId: endpoint.endpointId };
  const warn = (message: string) => (error: unknown) => {
    deps.log.warn(message, { ...fields, error: error instanceof Error ? error.message : String(error) });
  };
  if (endpoint.cancelledWithRow > 0) deps.onCancelled?.(endpoint.cancelledWithRow);
  const cancelled = await cancelPendingOf(deps.db, endpoint, now, {
    stop: deps.stopping,
    ...(deps.onCancelled && { onPage: deps.onCancelled }),
  }).catch(warn("could not cancel every pending delivery of a deleted endpoint; the rest at their turn"));
  if (!cancelled?.complete) return;
  try {
    // A long cancel leaves time for a new endpoint to take the id, and the queue is named by it.
    if (await findEndpoint(deps.db, endpoint.tenantId, endpoint.endpointId)) return;
    await deps.producer.discard({ tenantId: endpoint.tenantId, endpointId: endpoint.endpointId });
  } catch (error) {
    // What is left is harmless: the jobs find their deliveries cancelled.
    warn("could not remove a deleted endpoint's queue")(error);
  }
}
