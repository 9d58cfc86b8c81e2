import type { EnqueueItem } from "@hookline/queue";
import type { ApiDeps } from "../deps.js";

/**
 * Adds the jobs for attempts the store has just committed. A failed add is logged, not answered:
 * the commit stands (the store is the truth, the queue a pointer into it), and the sweeper finds
 * the pending deliveries and adds them within about HOOKLINE_SWEEP_GRACE plus an interval. An
 * error here would tell the caller the call failed when it did not, and a retry of it would be
 * refused (the delivery is pending) or be a duplicate.
 */
export async function enqueueCommitted(
  deps: Pick<ApiDeps, "producer" | "log">,
  items: EnqueueItem[],
  about: Record<string, string>,
): Promise<void> {
  await deps.producer.enqueue(items).catch((error: unknown) =>
    deps.log.warn("enqueue failed; the sweeper will retry", {
      ...about,
      error: error instanceof Error ? error.message : String(error),
    }),
  );
}
