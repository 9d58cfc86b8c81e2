import type { DeliveryConsumer, FedQueue, QueueLimits, QueueRouting } from "@hookline/queue";
import { endpointLimits, findEndpointsWithWork, type StoreDb } from "@hookline/store";

export interface DemandDeps {
  db: StoreDb;
  routing: QueueRouting;
  consumer: Pick<DeliveryConsumer, "demand" | "hasOpen" | "openEndpoints" | "readMark" | "updateLimits">;
  now(): number;
  /**
   * The limits to enforce for a queue, given the store's (an adaptive queue's learned concurrency),
   * and the origin its endpoint's URL names now (none for a lane).
   */
  resolveLimits?(queue: string, limits: QueueLimits, origin: string | undefined): QueueLimits;
  /** Scans at least this often, whatever the signals say (they may be lost). */
  intervalMs: number;
  onError(error: Error): void;
}

/** How far ahead a scan looks: queues due within it open now (they open just before the job is due). */
const LOOKAHEAD_MS = 1000;

/** Tells the consumer which queues have work, from the store (the truth) and from signals (the news). */
export interface DemandWatcher {
  /** Reads the store now; resolves when the consumer has been told. */
  scan(): Promise<void>;
  /** Jobs were added to these queues (undefined: somewhere; look). */
  fed(queues: FedQueue[] | undefined): void;
  close(): void;
}

export function watchDemand(deps: DemandDeps): DemandWatcher {
  let running: Promise<void> | undefined;
  let again = false;
  let nextScan: NodeJS.Timeout | undefined;
  let closed = false;

  const scanOnce = async () => {
    const now = deps.now();
    const readMark = deps.consumer.readMark();
    const { due, nextDueAt } = await findEndpointsWithWork(deps.db, new Date(now + LOOKAHEAD_MS));
    const limitsOf = (
      queue: string,
      row: { maxInFlight: number | null; rateLimitPerSecond: number | null; url: string | null },
    ) => {
      const limits = deps.routing.limitsOf({
        maxInFlight: row.maxInFlight,
        ratePerSecond: row.rateLimitPerSecond,
      });
      // A URL the delivery would refuse anyway (a row written by hand) has no origin to learn against.
      const origin =
        deps.routing.lanes === 0 && row.url !== null && URL.canParse(row.url)
          ? new URL(row.url).origin
          : undefined;
      return deps.resolveLimits ? deps.resolveLimits(queue, limits, origin) : limits;
    };
    deps.consumer.demand(
      due.map((work) => {
        const queue = deps.routing.queueOf(work);
        return {
          queue,
          dueAt: work.dueAt.getTime(),
          limits: limitsOf(queue, work),
          ...(deps.routing.lanes === 0 && {
            endpoint: { tenantId: work.tenantId, endpointId: work.endpointId },
          }),
        };
      }),
      readMark,
    );
    // Open queues with nothing due may still have had their limits changed.
    const open = deps.consumer.openEndpoints();
    const rows = await endpointLimits(
      deps.db,
      open.map((o) => o.endpoint),
    );
    deps.consumer.updateLimits(
      rows.map((row) => {
        const queue = deps.routing.queueOf(row);
        return { queue, limits: limitsOf(queue, row) };
      }),
    );
    // Look again when the next delivery falls due, or on the interval, whichever comes first.
    const wait = Math.min(
      deps.intervalMs,
      nextDueAt ? nextDueAt.getTime() - LOOKAHEAD_MS - deps.now() : Infinity,
    );
    clearTimeout(nextScan);
    if (!closed) {
      nextScan = setTimeout(() => void scan().catch(deps.onError), Math.max(0, wait));
      nextScan.unref();
    }
  };

  // One scan at a time; a request during one runs one more after it, never a pile of them.
  const scan = (): Promise<void> => {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      try {
        do {
          again = false;
          await scanOnce();
        } while (again && !closed);
      } finally {
        running = undefined;
      }
    })();
    return running;
  };

  return {
    scan,
    fed(queues) {
      // A queue already open takes its new jobs by itself; only news of others needs the store.
      // Every queue is asked (no early stop): an open one also learns when to wake for its job.
      const open = queues?.map((fed) => deps.consumer.hasOpen(fed.queue, fed.dueAt));
      if (open?.every(Boolean)) return;
      scan().catch(deps.onError);
    },
    close() {
      closed = true;
      clearTimeout(nextScan);
    },
  };
}
