/** Counts fade by half every this many ms, so a fixed bug or a new bottleneck is judged afresh. */
const HALF_LIFE_MS = 60_000;
/** Fewer weighted samples than this with fewer in flight say nothing yet: every failure counts as load. */
const MIN_SAMPLES = 10;
/** How unlikely, were the failures the endpoint's own, a level's failures must be to count as load. */
const SIGNIFICANCE = 0.02;

interface Tally {
  samples: number;
  failures: number;
  at: number;
}

/**
 * How often an endpoint fails (5xx, dropped connections) at each concurrency limit it has run
 * under. Failures that do not fall when the limit falls are the endpoint's own (a bug, a flaky
 * dependency), not load: cutting the limit for them would only hold a healthy endpoint near one in
 * flight. Failures at a level well above the rate the endpoint shows with fewer in flight are load.
 */
export class FailureBaseline {
  private readonly levels = new Map<number, Tally>();

  /** Records one attempt started under `level`. */
  record(level: number, failed: boolean, now: number): void {
    const tally = this.faded(level, now);
    tally.samples += 1;
    if (failed) tally.failures += 1;
  }

  /**
   * True when `failures` of `samples` attempts at `level` are more than the endpoint's rate below
   * that level explains: by a Chernoff bound, under SIGNIFICANCE likely were that rate the cause.
   * With too little seen below the level, any failure is taken for load.
   */
  isLoad(level: number, samples: number, failures: number, now: number): boolean {
    if (failures === 0) return false;
    let below = 0;
    let failedBelow = 0;
    for (const [other] of this.levels) {
      if (other >= level) continue;
      const tally = this.faded(other, now);
      below += tally.samples;
      failedBelow += tally.failures;
    }
    if (below < MIN_SAMPLES) return true;
    // Laplace's rule: a level that never failed in 20 attempts is not taken to never fail.
    const rate = (failedBelow + 1) / (below + 2);
    const observed = failures / samples;
    return observed > rate && samples * divergence(observed, rate) > Math.log(1 / SIGNIFICANCE);
  }

  private faded(level: number, now: number): Tally {
    let tally = this.levels.get(level);
    if (!tally) {
      tally = { samples: 0, failures: 0, at: now };
      this.levels.set(level, tally);
    }
    const factor = 0.5 ** (Math.max(0, now - tally.at) / HALF_LIFE_MS);
    tally.samples *= factor;
    tally.failures *= factor;
    tally.at = now;
    return tally;
  }
}

/** Kullback-Leibler divergence of Bernoulli(q) from Bernoulli(p), for 0 < p < 1. */
function divergence(q: number, p: number): number {
  const term = (a: number, b: number) => (a === 0 ? 0 : a * Math.log(a / b));
  return term(q, p) + term(1 - q, 1 - p);
}
