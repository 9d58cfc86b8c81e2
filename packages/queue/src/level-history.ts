/**
 * A level's counts fade by half for every this many ms since it was last written, applied when it
 * is written again: when the limit comes back to a level, what the endpoint does now outweighs
 * what it did minutes ago. A level the limit has left keeps its counts: it is the bar the current
 * level is judged by.
 */
const HALF_LIFE_MS = 60_000;
/** Fewer weighted attempts below a level than this are too little to judge it by (any failure then counts as load). */
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
  /** Answered attempts (not failed), and the sum of their latency. */
  answered: number;
  latencySum: number;
  at: number;
}

/** What the endpoint's answers looked like with fewer in flight than some level. */
export interface LatencyBelow {
  meanMs: number;
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
    const tally = this.fadedForWrite(level, now);
    tally.samples += 1;
    if (answer.failed) {
      tally.failures += 1;
      return;
    }
    tally.answered += 1;
    tally.latencySum += answer.latencyMs;
  }

  /**
   * True when `failures` of `samples` attempts at `level` are more than the endpoint's failures
   * below that level explain: above the highest rate the attempts below allow, by a margin that
   * rate would leave under FAILURE_SIGNIFICANCE likely (Chernoff bounds both). Measuring the
   * rate below against its upper bound, not its estimate, is what keeps a tally judged after every
   * window from misfiring on a chance run. With too little seen below the level, any failure is
   * taken for load, and the limit goes down to learn more.
   */
  failuresAreLoad(level: number, samples: number, failures: number): boolean {
    if (failures === 0) return false;
    const below = this.pooledBelow(level);
    if (below.samples < MIN_SAMPLES) return true;
    // Laplace's rule of succession estimates the rate below, for this coarse test only.
    if ((below.failures + 1) / (below.samples + 2) >= MOSTLY_FAILING) return true;
    return clearlyAbove(below, samples, failures);
  }

  /**
   * Only the measured part of failuresAreLoad: true when the failures at `level` are clearly above
   * the rate below it, false while too little was seen below to tell. For a tally that may hold
   * failures before the answers sent with them (the limiter's arrived answers): a single quick
   * failure must not take failuresAreLoad's shortcuts, which hold on any failure at all.
   */
  failuresClearlyAboveBelow(level: number, samples: number, failures: number): boolean {
    if (failures === 0) return false;
    const below = this.pooledBelow(level);
    return below.samples >= MIN_SAMPLES && clearlyAbove(below, samples, failures);
  }

  /**
   * The latency of answers at the lowest levels below `level` that together hold MIN_SAMPLES
   * answers, or undefined while fewer were seen below it. The lowest levels, not all of them: a
   * receiver that slows a little with each one more in flight would otherwise raise its own bar.
   */
  latencyBelow(level: number): LatencyBelow | undefined {
    let answered = 0;
    let sum = 0;
    for (const other of [...this.levels.keys()].sort((a, b) => a - b)) {
      const tally = this.levels.get(other);
      if (!tally || other >= level || answered >= MIN_SAMPLES) break;
      answered += tally.answered;
      sum += tally.latencySum;
    }
    return answered < MIN_SAMPLES ? undefined : { meanMs: sum / answered };
  }

  private pooledBelow(level: number): { samples: number; failures: number } {
    const pooled = { samples: 0, failures: 0 };
    for (const [other, tally] of this.levels) {
      if (other >= level) continue;
      pooled.samples += tally.samples;
      pooled.failures += tally.failures;
    }
    return pooled;
  }

  private fadedForWrite(level: number, now: number): Tally {
    let tally = this.levels.get(level);
    if (!tally) {
      tally = { samples: 0, failures: 0, answered: 0, latencySum: 0, at: now };
      this.levels.set(level, tally);
    }
    const factor = 0.5 ** (Math.max(0, now - tally.at) / HALF_LIFE_MS);
    if (factor < 1) {
      tally.samples *= factor;
      tally.failures *= factor;
      tally.answered *= factor;
      tally.latencySum *= factor;
      tally.at = now;
    }
    return tally;
  }
}

/** Whether `failures` of `samples` pass the highest rate the attempts below allow, and not by chance. */
function clearlyAbove(
  below: { samples: number; failures: number },
  samples: number,
  failures: number,
): boolean {
  const ceiling = highestRate(below.samples, below.failures);
  const observed = failures / samples;
  return observed > ceiling && samples * divergence(observed, ceiling) > Math.log(1 / FAILURE_SIGNIFICANCE);
}

/** The highest failure rate under which `failures` of `samples` is not unlikely (Chernoff, at FAILURE_SIGNIFICANCE). */
function highestRate(samples: number, failures: number): number {
  const observed = failures / samples;
  const allowed = Math.log(1 / FAILURE_SIGNIFICANCE) / samples;
  let low = observed;
  let high = 1;
  // Bisection: the divergence from the observed rate grows with the rate above it.
  for (let i = 0; i < 30; i++) {
    const middle = (low + high) / 2;
    if (divergence(observed, middle) > allowed) high = middle;
    else low = middle;
  }
  return high;
}

/** Kullback-Leibler divergence of Bernoulli(q) from Bernoulli(p), for 0 < p < 1 (infinite at p = 1 > q). */
function divergence(q: number, p: number): number {
  const term = (a: number, b: number) => (a === 0 ? 0 : a * Math.log(a / b));
  return term(q, p) + term(1 - q, 1 - p);
}
