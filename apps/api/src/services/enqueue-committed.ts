import { type EnqueueItem, QueueUnavailableError } from "@hookline/queue";
import { coalescedLog, type Logger } from "@hookline/runtime";
import type { ApiDeps } from "../deps.js";

type Warning = (fields: Record<string, unknown>) => void;
// Per logger, so per api process: while the queue is down every call's add fails, and the log
// gets the first of them and then a count a minute, not a line per call.
const outageWarnings = new WeakMap<Logger, Warning>();

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
  await deps.producer.enqueue(items).catch((error: unknown) => {
    const fields = { ...about, error: error instanceof Error ? error.message : String(error) };
    if (!(error instanceof QueueUnavailableError)) {
      deps.log.warn("enqueue failed; the sweeper will retry", fields);
      return;
    }
    let warn = outageWarnings.get(deps.log);
    if (!warn) {
      const log = deps.log;
      warn = coalescedLog(
        (message, fields) => log.warn(message, fields),
        "enqueue failed; the sweeper will retry",
        "more enqueues failed",
      );
      outageWarnings.set(deps.log, warn);
    }
    warn(fields);
  });
}
