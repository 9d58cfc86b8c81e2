import { Gauge, type Registry } from "prom-client";

/** A queue's backlog, read from the store. */
export interface QueueBacklog {
  queue: string;
  pending: number;
  oldestPendingAgeSeconds: number;
}

export interface BacklogGaugeOptions {
  /** Reads every queue's backlog from the store. */
  read: () => Promise<QueueBacklog[]>;
  /** A read failed or outlasted its budget: the scrape went without the backlog. */
  onError?: (error: Error) => void;
  /** How long one read is reused; BACKLOG_READ_EVERY_MS by default. */
  everyMs?: number;
  now?: () => number;
}

/**
 * Queues named in the per-queue gauges: the deepest, and the longest waiting. One series per
 * queue with a backlog is one per endpoint: a hundred thousand endpoints made each scrape 15 MB
 * and 2.3 s of the process's event loop, with deliveries waiting behind it.
 */
export const NAMED_QUEUES = 10;
/** A read is reused for this long by default: it groups every pending delivery, on every scrape of every process. */
export const BACKLOG_READ_EVERY_MS = 15_000;
/** How long a scrape waits for a read; past it the scrape goes without the backlog, not without the rest. */
export const BACKLOG_READ_BUDGET_MS = 2_000;

/**
 * Registers the backlog gauges: pending deliveries in all, the NAMED_QUEUES deepest queues and
 * the NAMED_QUEUES whose oldest pending delivery is oldest, and whether the last read succeeded.
 */
export function registerBacklogGauges(registry: Registry, options: BacklogGaugeOptions): void {
  const now = options.now ?? Date.now;
  const everyMs = options.everyMs ?? BACKLOG_READ_EVERY_MS;
  let last: { at: number; rows: QueueBacklog[] } | undefined;
  let reading: Promise<QueueBacklog[]> | undefined;
  let scrape: Promise<QueueBacklog[] | undefined> | undefined;
  const failed = (error: Error) => {
    options.onError?.(error);
    return undefined;
  };
  const fresh = async (): Promise<QueueBacklog[] | undefined> => {
    if (last && now() - last.at < everyMs) return last.rows;
    // One read at a time: a slow one is waited on again by the next scrape, not started twice.
    reading ??= options
      .read()
      .then((rows) => {
        // Kept even when it came too late for its scrape: the next one takes it.
        last = { at: now(), rows };
        return rows;
      })
      .finally(() => {
        reading = undefined;
      });
    let timer: NodeJS.Timeout | undefined;
    const budget = new Promise<"late">((resolve) => {
      timer = setTimeout(() => resolve("late"), BACKLOG_READ_BUDGET_MS);
    });
    try {
      const rows = await Promise.race([reading, budget]);
      if (rows === "late") return failed(new Error(`no backlog read within ${BACKLOG_READ_BUDGET_MS} ms`));
      return rows;
    } catch (error) {
      return failed(error instanceof Error ? error : new Error(String(error)));
    } finally {
      clearTimeout(timer);
    }
  };
  // Every gauge of one scrape takes the same read.
  const current = () => {
    scrape ??= fresh().finally(() => {
      scrape = undefined;
    });
    return scrape;
  };
  const gauge = (
    name: string,
    help: string,
    fill: (gauge: Gauge<"queue">, rows: QueueBacklog[]) => void,
    labelled = true,
  ) =>
    new Gauge({
      name,
      help,
      labelNames: labelled ? ["queue"] : [],
      registers: [registry],
      async collect() {
        this.reset();
        const rows = await current();
        if (rows) fill(this, rows);
        // A gauge without labels is always shown: NaN, not a 0 that reads as an empty backlog.
        else if (!labelled) this.set(Number.NaN);
      },
    });
  gauge(
    "hookline_deliveries_pending",
    "Pending deliveries in all (the same from every process: read from the store).",
    (g, rows) => g.set(rows.reduce((sum, row) => sum + row.pending, 0)),
    false,
  );
  gauge(
    "hookline_queue_depth",
    `Pending deliveries of the ${NAMED_QUEUES} deepest queues (endpoint or lane).`,
    (g, rows) => {
      for (const row of top(rows, (r) => r.pending)) g.set({ queue: row.queue }, row.pending);
    },
  );
  gauge(
    "hookline_oldest_pending_age_seconds",
    `Age of the oldest pending delivery, from its due time, of the ${NAMED_QUEUES} queues where it is oldest.`,
    (g, rows) => {
      for (const row of top(rows, (r) => r.oldestPendingAgeSeconds))
        g.set({ queue: row.queue }, row.oldestPendingAgeSeconds);
    },
  );
  new Gauge({
    name: "hookline_backlog_read_ok",
    help: `1 when this scrape has a read of the backlog from the store (at most ${everyMs / 1000} s old), 0 when the read failed or took over ${BACKLOG_READ_BUDGET_MS / 1000} s.`,
    registers: [registry],
    async collect() {
      this.set((await current()) ? 1 : 0);
    },
  });
}

/** The NAMED_QUEUES rows with the largest key. */
function top(rows: QueueBacklog[], key: (row: QueueBacklog) => number): QueueBacklog[] {
  return [...rows].sort((a, b) => key(b) - key(a)).slice(0, NAMED_QUEUES);
}
