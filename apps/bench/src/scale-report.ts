import type { BacklogResult } from "./backlog.js";
import { quantile } from "./emit-load.js";
import type { FanOutResult } from "./fan-out.js";
import type { HangingResult } from "./hanging.js";
import type { IdleResult, IdleWindow } from "./idle.js";
import type { RateLimitResult } from "./rate-limit.js";
import { table } from "./report.js";
import type { ScaleBackendResult } from "./scale-run.js";
import { timedText } from "./timed.js";

// The tables `pnpm bench:scale` prints, each with the target issue 10 sets beside it.

const n = (value: number, digits = 0) =>
  Number.isFinite(value)
    ? value.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits })
    : "-";

/** Idle resources: one row per backend, process and window. */
export function idleTable(runs: ScaleBackendResult[]): string | undefined {
  const rows: string[][] = [];
  const notes: string[] = [];
  for (const run of runs) {
    const idle: IdleResult | undefined = run.idle;
    if (!idle) continue;
    if (idle.stoppedBecause) {
      notes.push(
        `${run.backend}: registered ${n(idle.loaded.endpoints)} of ${n(idle.asked)}: ${idle.stoppedBecause}`,
      );
    }
    if (idle.deleted < idle.loaded.endpoints) {
      notes.push(`${run.backend}: deleted only ${n(idle.deleted)} of ${n(idle.loaded.endpoints)} in time`);
    }
    const windows: [string, IdleWindow][] = [
      [`${n(idle.loaded.endpoints)} endpoints`, idle.loaded],
      [`after deleting ${n(idle.deleted)}`, idle.afterDelete],
    ];
    for (const [label, window] of windows) {
      for (const [process, f] of Object.entries(window.byProcess)) {
        rows.push([
          run.backend,
          process,
          label,
          n(f.redis),
          n(f.postgres),
          n(f.redis + f.postgres),
          n(f.otherTcp),
          n(f.rssBytes / 1024 ** 2),
          `${n(f.cpuPercent, 1)}%`,
          n(f.fds),
          `${window.settled ? "yes" : "no"}, machine ${n(window.machinePercent)}%`,
        ]);
      }
    }
  }
  if (rows.length === 0) return undefined;
  return [
    "1. Idle, no traffic (counts at the end of the window; CPU over it, 100% = one core)",
    "   target: worker <= 50 Redis+PostgreSQL connections, < 300 MB RSS, < 3% of a core; embedded",
    "   < 3% of a core, descriptors not growing with endpoints; the same after deleting them all",
    table(
      [
        "backend",
        "process",
        "window",
        "Redis",
        "PG",
        "Redis+PG",
        "other TCP",
        "RSS MB",
        "CPU",
        "fds",
        "settled, machine busy",
      ],
      rows,
    ),
    ...notes.map((note) => `   ${note}`),
  ].join("\n");
}

/** Hanging endpoint: healthy completion time with and without it. */
export function hangingTable(runs: ScaleBackendResult[]): string | undefined {
  const rows = runs.flatMap((run) => {
    const h: HangingResult | undefined = run.hanging;
    if (!h) return [];
    const ratio =
      "seconds" in h.with && "seconds" in h.without ? h.with.seconds / h.without.seconds : Number.NaN;
    return [
      [
        run.backend,
        n(h.deliveries),
        timedText(h.without),
        timedText(h.with),
        n(ratio, 2),
        `${n(h.machineWithout)}% / ${n(h.machineWith)}%`,
      ],
    ];
  });
  if (rows.length === 0) return undefined;
  return [
    "2. One endpoint that never answers, beside the healthy ones (first Emit to last healthy receipt)",
    "   target: ratio < 1.10",
    table(["backend", "healthy deliveries", "alone", "beside it", "ratio", "machine busy"], rows),
  ].join("\n");
}

/** New-delivery latency behind a slow endpoint's backlog. */
export function backlogTable(runs: ScaleBackendResult[]): string | undefined {
  const notes: string[] = [];
  const rows = runs.flatMap((run) => {
    const b: BacklogResult | undefined = run.backlog;
    if (!b) return [];
    if (b.queued < b.asked) {
      notes.push(`${run.backend}: queued ${n(b.queued)} of ${n(b.asked)}: Emit ran out of --fill-s`);
    }
    return [
      [
        run.backend,
        `${n(b.queued)} in ${n(b.emitSeconds, 1)} s`,
        n(b.latenciesMs.length),
        n(quantile(b.latenciesMs, 0.5)),
        n(quantile(b.latenciesMs, 0.99)),
        n(b.latenciesMs.at(-1) ?? Number.NaN),
        n(b.lost),
        `${n(b.machinePercent)}%`,
      ],
    ];
  });
  if (rows.length === 0) return undefined;
  return [
    "3. Paced single deliveries to one endpoint while another has a backlog (Emit sent to receipt)",
    "   target: p99 < 250 ms",
    table(
      ["backend", "backlog queued", "timed", "p50 ms", "p99 ms", "max ms", "not received", "machine busy"],
      rows,
    ),
    ...notes.map((note) => `   ${note}`),
  ].join("\n");
}

/** One Emit to many endpoints of one tenant. */
export function fanOutTable(runs: ScaleBackendResult[]): string | undefined {
  const notes: string[] = [];
  const rows = runs.flatMap((run) => {
    const f: FanOutResult | undefined = run.fanout;
    if (!f) return [];
    if (f.stoppedBecause) notes.push(`${run.backend}: ${n(f.endpoints)} endpoints only: ${f.stoppedBecause}`);
    return [
      [
        run.backend,
        n(f.endpoints),
        timedText(f.emit),
        timedText(f.received),
        timedText(f.recorded),
        n(f.delivered),
      ],
    ];
  });
  if (rows.length === 0) return undefined;
  return [
    "4. Fan-out: one Emit to every endpoint of one tenant (times from the Emit call)",
    table(["backend", "endpoints", "Emit answered", "all received", "none pending", "delivered"], rows),
    ...notes.map((note) => `   ${note}`),
  ].join("\n");
}

/** Observed receive rate of a rate-limited endpoint against its limit. */
export function rateTable(runs: ScaleBackendResult[]): string | undefined {
  const notes: string[] = [];
  const rows = runs.flatMap((run) => {
    const r: RateLimitResult | undefined = run.rate;
    if (!r) return [];
    if (!r.available) {
      notes.push(`${run.backend}: not available: ${r.why}`);
      return [[run.backend, "not available", "-", "-", "-", "-"]];
    }
    const error = (rate: number) => `${n((100 * (rate - r.setRate)) / r.setRate, 1)}%`;
    return [
      [
        run.backend,
        `${n(r.setRate, 1)}/s`,
        `${n(r.received)} in ${timedText(r.took)}`,
        `${n(r.observedRate, 1)}/s`,
        error(r.observedRate),
        `${n(r.steadyRate, 1)}/s (${error(r.steadyRate)})`,
      ],
    ];
  });
  if (rows.length === 0) return undefined;
  return [
    "5. Rate limit: a burst to one endpoint with rate_limit_per_second set (receipts per whole second from the first)",
    "   target: observed within ±10% of the set rate",
    table(["backend", "set", "received", "observed", "error", "after the first second"], rows),
    ...notes.map((note) => `   ${note}`),
  ].join("\n");
}
