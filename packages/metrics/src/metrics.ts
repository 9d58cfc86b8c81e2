import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import { type BacklogGaugeOptions, registerBacklogGauges } from "./backlog-gauges.js";

/** Where an attempt's result falls, as a low-cardinality label. */
export type StatusClass = "2xx" | "3xx" | "4xx" | "5xx" | "no_response";

export function statusClassOf(status: number): StatusClass {
  if (status >= 200 && status < 300) return "2xx";
  if (status >= 300 && status < 400) return "3xx";
  if (status >= 400 && status < 500) return "4xx";
  if (status >= 500 && status < 600) return "5xx";
  return "no_response";
}

/** Hookline's Prometheus metrics for one process; every process builds its own registry. */
export class HooklineMetrics {
  readonly registry = new Registry();
  readonly deliveries = new Counter({
    name: "hookline_deliveries_total",
    help: "Deliveries that reached a final status, by outcome.",
    labelNames: ["outcome"] as const,
    registers: [this.registry],
  });
  readonly attempts = new Counter({
    name: "hookline_attempts_total",
    help: "Attempts recorded, by response status class.",
    labelNames: ["status_class"] as const,
    registers: [this.registry],
  });
  readonly attemptDuration = new Histogram({
    name: "hookline_attempt_duration_seconds",
    help: "How long attempts took, from the first byte sent to the capped body read.",
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });
  readonly attemptStartDelay = new Histogram({
    name: "hookline_attempt_start_delay_seconds",
    help: "How long after it was due a worker started an attempt's request, by kind: first (due when its Emit was written), retry (due at its scheduled time) or manual (due when asked for).",
    labelNames: ["kind"] as const,
    // From a retry on time (tens of ms) to a backlog worked off over minutes.
    buckets: [0.01, 0.025, 0.05, 0.1, 0.2, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900],
    registers: [this.registry],
  });
  readonly sweeperReenqueued = new Counter({
    name: "hookline_sweeper_reenqueued_total",
    help: "Pending deliveries the sweeper found without a queue job and enqueued again.",
    registers: [this.registry],
  });
  // Named after grpc-go's grpc_server_handled_total and grpc_server_handling_seconds, which
  // dashboards already know; `method` is the gRPC path without its leading slash.
  readonly rpcHandled = new Counter({
    name: "hookline_rpc_handled_total",
    help: "RPCs a service of the api answered, by method and status code (streams once they end).",
    labelNames: ["method", "code"] as const,
    registers: [this.registry],
  });
  readonly rpcHandling = new Histogram({
    name: "hookline_rpc_handling_seconds",
    help: "How long unary RPCs took, from the call reaching the api to the service returning its answer.",
    labelNames: ["method"] as const,
    // Fine below 50 ms, where an Emit's latency is judged (issue 11 asks p99 < 20 ms).
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.015, 0.02, 0.03, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  constructor(options: { backlog?: BacklogGaugeOptions; openStreams?: () => number } = {}) {
    collectDefaultMetrics({ register: this.registry, prefix: "hookline_" });
    const { backlog, openStreams } = options;
    if (backlog) registerBacklogGauges(this.registry, backlog);
    if (openStreams) {
      this.readAtScrape(
        "hookline_watch_streams_open",
        "WatchAttempts streams open on this api process.",
        openStreams,
      );
    }
  }

  /**
   * Reports the learned limit of each adaptive queue (endpoint, or lane) open in this process, read
   * at scrape time; closed queues drop out, so the label set stays small.
   */
  trackConcurrencyLimits(limits: () => { queue: string; limit: number }[]): void {
    new Gauge({
      name: "hookline_queue_concurrency_limit",
      help: "Adaptive concurrency limit of a queue open in this worker: attempts it may have in flight across all workers.",
      labelNames: ["queue"] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const row of limits()) this.set({ queue: row.queue }, row.limit);
      },
    });
  }

  /**
   * Reports the answers whose writes (the attempt's record, its retry's job) this worker still
   * has pending after their jobs ended: a number that climbs shows a store falling behind.
   */
  trackPendingAttemptWrites(pending: () => number): void {
    this.readAtScrape(
      "hookline_attempt_writes_pending",
      "Attempts answered whose record (and retry job) this worker is still writing after their job ended.",
      pending,
    );
  }

  /**
   * Reports how long the embedded database's thread has been busy (wall clock, so on a machine
   * short of cores it includes time the thread waited for one): near one second a second,
   * statements wait their turn (the process has outgrown the embedded store, or its machine).
   */
  trackEmbeddedEngine(busySeconds: () => number): void {
    let reported = 0;
    new Counter({
      name: "hookline_embedded_engine_busy_seconds_total",
      help: "Time the embedded database's thread (PGlite) was busy (wall clock: running statements and serving its socket); a rate near 1 means statements queue.",
      registers: [this.registry],
      collect() {
        // prom-client's counters only add: each scrape adds the busy time since the last.
        const now = busySeconds();
        if (now > reported) this.inc(now - reported);
        reported = Math.max(reported, now);
      },
    });
  }

  /** A gauge without labels whose value is read from this process when scraped. */
  private readAtScrape(name: string, help: string, read: () => number): void {
    new Gauge({
      name,
      help,
      registers: [this.registry],
      collect() {
        this.set(read());
      },
    });
  }
}
