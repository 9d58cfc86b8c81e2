import { readMetricsText } from "./metrics-text.js";

/** A histogram's cumulative counts by upper bound (seconds, +Inf included), as /metrics shows them. */
export type Buckets = Map<number, number>;

const EMIT = "hookline.v1.EmitService/Emit";

/** The api's own Emit timings so far: `hookline_rpc_handling_seconds` read from its /metrics. */
export async function readEmitHandling(metricsPort: number): Promise<Buckets> {
  return bucketsOf(await readMetricsText(metricsPort), "hookline_rpc_handling_seconds", EMIT);
}

export function bucketsOf(text: string, histogram: string, method: string): Buckets {
  const buckets: Buckets = new Map();
  const line = new RegExp(`^${histogram}_bucket\\{(.*)\\} (\\S+)$`);
  for (const row of text.split("\n")) {
    const match = line.exec(row);
    if (!match?.[1] || !match[2]) continue;
    const labels = new Map([...match[1].matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    const le = labels.get("le");
    if (labels.get("method") !== method || le === undefined) continue;
    buckets.set(le === "+Inf" ? Number.POSITIVE_INFINITY : Number(le), Number(match[2]));
  }
  return buckets;
}

/**
 * The q-quantile in ms of what was observed between two reads, interpolated linearly inside its
 * bucket as Prometheus's histogram_quantile does (so it is as fine as the buckets). Undefined
 * when nothing was observed, or when the quantile falls past the largest finite bound (where
 * histogram_quantile would give that bound, which reads as a measurement it is not).
 */
export function quantileBetween(before: Buckets, after: Buckets, q: number): number | undefined {
  // A missing series (the api counts nothing, or the name changed) must not read as "no figure".
  if (!after.has(Number.POSITIVE_INFINITY)) throw new Error("no Emit timings in the api's /metrics");
  const bounds = [...after.keys()].sort((a, b) => a - b);
  const counts = bounds.map((le) => (after.get(le) ?? 0) - (before.get(le) ?? 0));
  const total = counts.at(-1) ?? 0;
  if (total <= 0) return undefined;
  const rank = q * total;
  let lower = 0;
  let below = 0;
  for (const [i, le] of bounds.entries()) {
    const count = counts[i] ?? 0;
    if (count >= rank) {
      if (le === Number.POSITIVE_INFINITY) return undefined;
      return (lower + ((le - lower) * (rank - below)) / Math.max(count - below, 1)) * 1000;
    }
    lower = le;
    below = count;
  }
  return undefined;
}
