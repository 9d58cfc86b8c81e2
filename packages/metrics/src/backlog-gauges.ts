import { Gauge, type Registry } from "prom-client";

/** A queue's backlog, read from the store. */
export interface QueueBacklog {
  queue: string;
  pending: number;
  /** When its oldest pending delivery fell due (ms since the epoch). */
  oldestDueAt: number;
}

export interface BacklogGaugeOptions {
  /** Reads every queue's backlog from the store. */
  read: () => Promise<QueueBacklog[]>;
  /** A read failed, or a scrape went on without waiting for one. */
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
/** A read is reused this long by default: it groups every pending delivery, on every scrape of every process. */
export const BACKLOG_READ_EVERY_MS = 15_000;
/** How long a scrape waits for a read; past it, the scrape shows the last read, not nothing. */
export const BACKLOG_READ_BUDGET_MS = 2_000;

/** What one read says, worked out once: the scrapes it serves only copy it. */
interface BacklogSummary {
  /** When the read started. */
  readAt: number;
  total: number;
  deepest: QueueBacklog[];
  longestWaiting: QueueBacklog[];
}

/**
 * Registers the backlog gauges: pending deliveries in all, the NAMED_QUEUES deepest queues and
 * the NAMED_QUEUES whose oldest pending delivery is oldest, how old the read they come from is,
 * and whether the latest read succeeded. A read slower than the budget is not waited for: the
 * scrape shows the last one (its age says so), and the slow one serves the scrapes after it; once
 * a read has taken longer than the budget, scrapes start the next read without waiting for it.
 */
export function registerBacklogGauges(registry: Registry, options: BacklogGaugeOptions): void {
  const now = options.now ?? Date.now;
  const everyMs = options.everyMs ?? BACKLOG_READ_EVERY_MS;
  let shown: BacklogSummary | undefined;
  let lastReadOk = true;
  /** The last read took longer than the budget: scrapes stop waiting for reads until one does not. */
  let slowStore = false;
  let reading: Promise<void> | undefined;
  let scrape: Promise<BacklogSummary | undefined> | undefined;
  const report = (error: unknown) => {
    try {
      options.onError?.(error instanceof Error ? error : new Error(String(error)));
    } catch {
      // A logger that throws must not leave a read's promise rejected with no one to hear it.
    }
  };
  const read = () => {
    const readAt = now();
    // One read at a time: a slow one is joined by the scrapes that come meanwhile, not started twice.
    reading ??= Promise.resolve()
      .then(() => options.read())
      .then(
        (rows) => {
          shown = summarize(rows, readAt);
          lastReadOk = true;
        },
        (error: unknown) => {
          lastReadOk = false;
          report(error);
        },
      )
      .finally(() => {
        const tookMs = now() - readAt;
        slowStore = tookMs > BACKLOG_READ_BUDGET_MS;
        if (slowStore)
          report(new Error(`the backlog read took ${tookMs} ms; scrapes show the last one meanwhile`));
        reading = undefined;
      });
    return reading;
  };
  const refreshed = async (): Promise<BacklogSummary | undefined> => {
    if (shown && now() - shown.readAt < everyMs) return shown;
    // A store slower than the budget: each scrape would wait the budget out, then show the last read.
    if (shown && slowStore) {
      void read();
      return shown;
    }
    let timer: NodeJS.Timeout | undefined;
    const budget = new Promise<"late">((resolve) => {
      timer = setTimeout(() => resolve("late"), BACKLOG_READ_BUDGET_MS);
    });
    const outcome = await Promise.race([read(), budget]);
    clearTimeout(timer);
    if (outcome === "late")
      report(new Error(`no backlog read within ${BACKLOG_READ_BUDGET_MS} ms; the last one is shown`));
    return shown;
  };
  // Every gauge of one scrape takes the same read.
  const current = () => {
    scrape ??= refreshed().finally(() => {
      scrape = undefined;
    });
    return scrape;
  };
  const gauge = (
    name: string,
    help: string,
    fill: (gauge: Gauge<"queue">, summary: BacklogSummary) => void,
  ) =>
    new Gauge({
      name,
      help,
      labelNames: ["queue"] as const,
      registers: [registry],
      async collect() {
        this.reset();
        const summary = await current();
        if (summary) fill(this, summary);
      },
    });
  // Without labels a gauge is always shown: NaN until a read succeeds, not a 0 that reads as empty.
  const unlabelled = (name: string, help: string, value: (summary: BacklogSummary | undefined) => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      async collect() {
        this.set(value(await current()));
      },
    });
  unlabelled(
    "hookline_deliveries_pending",
    "Pending deliveries in all (the same from every process: read from the store).",
    (summary) => summary?.total ?? Number.NaN,
  );
  gauge(
    "hookline_queue_depth",
    `Pending deliveries of the ${NAMED_QUEUES} deepest queues (endpoint or lane).`,
    (g, s) => {
      for (const row of s.deepest) g.set({ queue: row.queue }, row.pending);
    },
  );
  gauge(
    "hookline_oldest_pending_age_seconds",
    `Age of the oldest pending delivery, from its due time, of the ${NAMED_QUEUES} queues where it is oldest.`,
    (g, s) => {
      const at = now();
      for (const row of s.longestWaiting)
        g.set({ queue: row.queue }, Math.max(0, (at - row.oldestDueAt) / 1000));
    },
  );
  unlabelled(
    "hookline_backlog_age_seconds",
    "How long ago the read of the store the backlog gauges show began (NaN before the first).",
    (summary) => (summary ? Math.max(0, now() - summary.readAt) / 1000 : Number.NaN),
  );
  unlabelled(
    "hookline_backlog_read_ok",
    "0 when the latest completed read of the backlog from the store failed, else 1 (a read under way counts as neither).",
    () => (lastReadOk ? 1 : 0),
  );
}

function summarize(rows: QueueBacklog[], readAt: number): BacklogSummary {
  const top = (key: (row: QueueBacklog) => number) =>
    [...rows].sort((a, b) => key(b) - key(a)).slice(0, NAMED_QUEUES);
  return {
    readAt,
    total: rows.reduce((sum, row) => sum + row.pending, 0),
    deepest: top((row) => row.pending),
    longestWaiting: top((row) => -row.oldestDueAt),
  };
}
