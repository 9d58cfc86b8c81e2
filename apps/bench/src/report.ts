import os from "node:os";
import type { BackendResult } from "./backend-run.js";
import type { CeilingResult } from "./ceiling.js";
import { quantile } from "./emit-load.js";

/** The machine line: what the figures were measured on. */
export function machineText(): string {
  const cpus = os.cpus();
  const model = cpus[0]?.model.trim() ?? "unknown CPU";
  const memory = (os.totalmem() / 1024 ** 3).toFixed(1);
  return `machine: ${cpus.length} cores (${model}), ${memory} GiB memory, Node ${process.version}, ${os.platform()} ${os.release()}`;
}

/** The load average now: other work on the machine skews every figure. */
export function loadText(): string {
  const [one, five] = os.loadavg();
  return `load average ${one?.toFixed(2)} (1 min), ${five?.toFixed(2)} (5 min) on ${os.cpus().length} cores`;
}

/** Renders rows as a table with a header rule; numeric-looking cells are right-aligned. */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? "").length)));
  const numeric = (text: string) => /^[-+]?[\d,.]+(\s?[%x×s])?$/.test(text);
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (numeric(cell) ? cell.padStart(widths[i] ?? 0) : cell.padEnd(widths[i] ?? 0)))
      .join("  ")
      .trimEnd();
  return [line(header), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n");
}

const fixed = (n: number, digits = 0) =>
  n.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });

/**
 * Each round's plain POST loop and that round's backend runs, one row each; a run is divided by
 * its own round's ceiling.
 */
export function resultsTable(
  rounds: readonly { round: number; ceiling: CeilingResult; runs: readonly BackendResult[] }[],
  concurrencyText: string,
): string {
  const rows = rounds.flatMap(({ round, ceiling, runs }) => [
    [
      String(round),
      "plain POST loop (undici, 64 in flight)",
      "-",
      fixed(ceiling.requests),
      fixed(ceiling.seconds, 2),
      fixed(ceiling.perSecond),
      "-",
      "-",
      "-",
      "1.00",
    ],
    ...runs.map((run) => {
      const perSecond = run.deliveries / run.seconds;
      return [
        String(round),
        `hookline ${run.backend}`,
        concurrencyText,
        fixed(run.deliveries),
        fixed(run.seconds, 2),
        fixed(perSecond),
        fixed(run.deliveries / run.secondsToLastRequest),
        fixed(quantile(run.emitLatenciesMs, 0.5), 1),
        fixed(quantile(run.emitLatenciesMs, 0.99), 1),
        fixed(perSecond / ceiling.perSecond, 3),
      ];
    }),
  ]);
  return table(
    [
      "round",
      "run",
      "endpoint conc.",
      "POSTs",
      "seconds",
      "deliveries/s",
      "to last POST/s",
      "Emit p50 ms",
      "Emit p99 ms",
      "÷ plain POST",
    ],
    rows,
  );
}

/** The CPU group that stands for every process on the machine. */
export const MACHINE = "machine";

/** Where each process spent CPU during each measured window (100% = one core busy). */
export function cpuTable(
  runs: readonly { label: string; seconds: number; cpu: Map<string, number> }[],
): string | undefined {
  const names = [...new Set(runs.flatMap((run) => [...run.cpu.keys()]))];
  if (names.length === 0 || runs.every((run) => [...run.cpu.values()].every((s) => s === 0)))
    return undefined;
  const percent = (seconds: number | undefined, of: number) =>
    seconds === undefined ? "-" : `${fixed((100 * seconds) / of)}%`;
  const rows = runs.map((run) => {
    const ours = [...run.cpu].filter(([name]) => name !== MACHINE).reduce((sum, [, s]) => sum + s, 0);
    return [
      run.label,
      fixed(run.seconds, 2),
      ...names.filter((name) => name !== MACHINE).map((name) => percent(run.cpu.get(name), run.seconds)),
      percent(ours, run.seconds),
      percent(run.cpu.get(MACHINE), run.seconds),
    ];
  });
  const columns = names.filter((name) => name !== MACHINE);
  return table(["run", "seconds", ...columns, "these", "whole machine"], rows);
}

/** The emit phase alone: how fast the api took the events in. */
export function emitLine(run: BackendResult, events: number): string {
  return `${run.backend}: ${fixed(events)} Emit calls in ${fixed(run.emitSeconds, 2)} s (${fixed(events / run.emitSeconds)} events/s)`;
}
