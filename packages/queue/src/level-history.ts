/** Counts fade by half every this many ms, so a fixed bug, a new bottleneck or a slower receiver is judged afresh. */
const HALF_LIFE_MS = 60_000;
/** Fewer weighted attempts than this with fewer in flight say nothing yet. */
const MIN_SAMPLES = 10;
/** How unlikely, were the failures the endpoint's own, a level's failures must be to count as load. */
const FAILURE_SIGNIFICANCE = 0.02;
/**
 * An endpoint failing at least this share of its requests with fewer in flight is mostly broken:
 * its failures count as load, as TCP counts loss, so it is held near one in flight. More slots
 * would mostly buy more failed attempts, and hold retries behind them instead of in the queue,
 * where a retry that comes due goes first.
 */
const MOSTLY_FAILING = 0.5;

interface Tally {
  samples: number;
  failures: number;
  /** Answered attempts (not failed), and the sum and sum of squares of their latency. */
  answered: number;
  latencySum: number;
  latencySquares: number;
  at: number;
}

/** What the endpoint's answers looked like with fewer in flight than some level. */
export interface LatencyBelow {
  meanMs: number;
  /** Standard deviation of one answer's latency. */
  deviationMs: number;
}

/**
 * How an endpoint answered at each concurrency limit it has run under: how often it failed (5xx,
 * dropped connections) and how long its answers took. A level is judged against the levels below
 * it, so what the endpoint does whatever its load (fails a quarter of its requests, answers in 5 ms
 * or in 300 ms by itself) is not read as load; what rises with the limit is.
 */
export class LevelHistory {
  private readonly levels = new Map<number, Tally>();

  /** Records one attempt started under `level`: a failure, or an answer and its latency. */
  record(level: number, answer: { failed: true } | { failed: false; latencyMs: number }, now: number): void {
    const tally = this.faded(level, now);
    tally.samples += 1;
    if (answer.failed) {
      tally.failures += 1;
      return;
    }
    tally.answered += 1;
    tally.latencySum += answer.latencyMs;
    tally.latencySquares += answer.latencyMs * answer.latencyMs;
  }

  /**
   * True when `failures` of `samples` attempts at `level` are more than the endpoint's rate below
   * that level explains: by a Chernoff bound, under FAILURE_SIGNIFICANCE likely were that rate the
   * cause. With too little seen below the level, any failure is taken for load.
   */
  failuresAreLoad(level: number, samples: number, failures: number, now: number): boolean {
    if (failures === 0) return false;
    const below = this.pooledBelow(level, now);
    if (below.samples < MIN_SAMPLES) return true;
    // Laplace's rule: a level that never failed in 20 attempts is not taken to never fail.
    const rate = (below.failures + 1) / (below.samples + 2);
    if (rate >= MOSTLY_FAILING) return true;
    const observed = failures / samples;
    return observed > rate && samples * divergence(observed, rate) > Math.log(1 / FAILURE_SIGNIFICANCE);
  }

  /**
   * The latency of answers at the lowest levels below `level` that together hold MIN_SAMPLES
   * answers, or undefined while fewer were seen below it. The lowest levels, not all of them: a
   * receiver that slows a little with each one more in flight would otherwise raise its own bar.
   */
  latencyBelow(level: number, now: number): LatencyBelow | undefined {
    let answered = 0;
    let sum = 0;
    let squares = 0;
    for (const other of [...this.levels.keys()].sort((a, b) => a - b)) {
      if (other >= level || answered >= MIN_SAMPLES) break;
      const tally = this.faded(other, now);
      answered += tally.answered;
      sum += tally.latencySum;
      squares += tally.latencySquares;
    }
    if (answered < MIN_SAMPLES) return undefined;
    const meanMs = sum / answered;
    const variance = Math.max(0, squares / answered - meanMs * meanMs);
    return { meanMs, deviationMs: Math.sqrt(variance) };
  }

  private pooledBelow(level: number, now: number): { samples: number; failures: number } {
    const pooled = { samples: 0, failures: 0 };
    for (const [other] of this.levels) {
      if (other >= level) continue;
      const tally = this.faded(other, now);
      pooled.samples += tally.samples;
      pooled.failures += tally.failures;
    }
    return pooled;
  }

  private faded(level: number, now: number): Tally {
    let tally = this.levels.get(level);
    if (!tally) {
      tally = { samples: 0, failures: 0, answered: 0, latencySum: 0, latencySquares: 0, at: now };
      this.levels.set(level, tally);
    }
    const factor = 0.5 ** (Math.max(0, now - tally.at) / HALF_LIFE_MS);
    if (factor < 1) {
      tally.samples *= factor;
      tally.failures *= factor;
      tally.answered *= factor;
      tally.latencySum *= factor;
      tally.latencySquares *= factor;
      tally.at = now;
    }
    return tally;
  }
}

/** Kullback-Leibler divergence of Bernoulli(q) from Bernoulli(p), for 0 < p < 1. */
function divergence(q: number, p: number): number {
  const term = (a: number, b: number) => (a === 0 ? 0 : a * Math.log(a / b));
  return term(q, p) + term(1 - q, 1 - p);
}
