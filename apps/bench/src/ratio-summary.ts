import type { ComparedPair } from "./sections-report.js";
import type { ThroughputRun } from "./throughput.js";

// Over several rounds, one "÷ reference" figure per round is noise as much as signal: the
// median and the range say how far a ratio can be trusted.

const perSecond = (run: ThroughputRun) => run.deliveries / run.seconds;

/** Hookline's deliveries/s over the reference's of the same round; undefined without a reference. */
export function referenceRatio(pair: ComparedPair): number | undefined {
  return pair.reference ? perSecond(pair.hookline) / perSecond(pair.reference) : undefined;
}

/** The middle value (the mean of the two middle ones for an even count); NaN for none. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  if (sorted.length === 0) return Number.NaN;
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/** One line per Hookline backend with a ratio in more than one round: median and range of its ratios. */
export function ratioSummaryLines(pairs: readonly ComparedPair[]): string[] {
  const byRun = new Map<string, { against: string; ratios: number[] }>();
  for (const pair of pairs) {
    const ratio = referenceRatio(pair);
    if (ratio === undefined || !pair.reference) continue;
    const entry = byRun.get(pair.hookline.label) ?? { against: pair.reference.label, ratios: [] };
    byRun.set(pair.hookline.label, entry);
    entry.ratios.push(ratio);
  }
  const two = (n: number) => n.toFixed(2);
  return [...byRun]
    .filter(([, { ratios }]) => ratios.length > 1)
    .map(
      ([label, { against, ratios }]) =>
        `${label} ÷ ${against}: median ${two(median(ratios))}, range ${two(Math.min(...ratios))}–${two(Math.max(...ratios))} over ${ratios.length} rounds`,
    );
}
