import { LevelHistory } from "./level-history.js";
import { StartOrder } from "./start-order.js";

/**
 * What one attempt says about its endpoint's load: "overload" is unambiguous (429, a timeout);
 * "failure" (5xx, a dropped or refused connection) may be load or the endpoint's own fault.
 */
export type LoadSignal = "ok" | "overload" | "failure" | "neutral";

/** The limit an attempt was sent under (AdaptiveLimit.current when it started). */
export interface LimitSetting {
  /** Counts the limit's changes, so that an attempt sent under an older limit is told apart. */
  epoch: number;
  limit: number;
}

/** One finished attempt, as the limiter sees it. */
export interface LimitSample {
  /** When the attempt started, on the limiter's clock. */
  startedAt: number;
  /** The limit it was sent under. */
  sentUnder: LimitSetting;
  /** How long the endpoint took to answer. */
  latencyMs: number;
  signal: LoadSignal;
  /** Attempts this process had in flight to the queue when this one started, itself included. */
  inFlight: number;
}

export interface AdaptiveLimitSettings {
  /** The lowest limit: an endpoint that fails every attempt still gets this many. */
  floor: number;
  /** Where a queue nobody has measured yet begins. */
  start: number;
  /** The highest limit (HOOKLINE_ENDPOINT_MAX_CONCURRENCY). */
  max: number;
}

/**
 * A window whose mean latency passes TOLERANCE times the mean at the lowest limits measured (the
 * endpoint nearly unloaded), plus SLACK_MS, is a sign of queueing.
 */
const TOLERANCE = 2;
// Absolute slack: a receiver answering in 1 ms must not read as overloaded at 3 ms of event-loop lag.
const SLACK_MS = 20;
/** An overload (429, timeout), or failures beyond the endpoint's own rate, halve the limit as TCP halves its window. */
const OVERLOAD_BACKOFF = 0.5;
/** A latency rise cuts in proportion to it, keeping at most LATENCY_BACKOFF_MAX and at least LATENCY_BACKOFF_MIN. */
const LATENCY_BACKOFF_MAX = 0.9;
// Gentler than an overload: the window's slow answers were mostly queued behind the level where it began.
const LATENCY_BACKOFF_MIN = 0.7;
/** Near the limit that last overloaded the endpoint, one step up takes this many calm windows... */
const PROBE_WINDOWS = 4;
/**
 * ...and, after a latency rise, this many times as long as the slow window took, so the limit
 * spends most of its time below a ceiling that answers slowly rather than above it.
 */
const PROBE_PATIENCE = 2;
const MAX_PROBE_WAIT_MS = 5_000;
/**
 * The slowest recent answer fades by half over this long, so a single slow answer delays the
 * settled tallies for a while only (cuts on failures meanwhile go by the arrived ones). A maximum,
 * not a window's: the first answers after a change are the quick ones (instant failures), and a
 * window of only those would say answers never take long.
 */
const SLOWEST_HALF_LIFE_MS = 10_000;
/** The attempts at one limit its failure tally weighs, at most about (older ones count by halves). */
const LEVEL_MEMORY = 1_000;

/**
 * An endpoint's concurrency limit, learned from its answers like a TCP congestion window: it
 * doubles each window of calm answers at first (slow start), then grows by one per window, and
 * only while the limit is actually in use; it is halved on an overload (429, a timeout) and cut
 * in proportion when latency rises well above the latency at the lowest limits measured.
 * Failures (5xx, dropped connections) halve it only when they are more frequent than with fewer in
 * flight (LevelHistory): an endpoint that fails a quarter of its requests whatever its load keeps
 * its limit. They are tallied by the limit their attempt was sent under once settled (see
 * unsettled), so instant failures do not outweigh the slower answers sent with them, and also as
 * they arrive, with the attempts still out counted as answered, so a cut need not wait for a slow
 * answer. A window is `limit` answers to attempts started since the last change, so answers to
 * attempts sent under an older limit (a whole batch of timeouts) count once, not once each. Near
 * the limit that last overloaded the endpoint (after a latency rise: anywhere above the cut) it
 * steps up only every few windows, so a ceiling is probed rarely instead of hit every cycle.
 * Pure: the clock is passed in, and nothing here does I/O.
 */
export class AdaptiveLimit {
  private value: number;
  private slowStart = true;
  /** Counts the changes: the failure tally of this limit takes only answers to attempts sent under it. */
  private epoch = 0;
  /** Samples of attempts started before this change nothing now (they only join the history). */
  private changedAt: number;
  private window = emptyWindow();
  /**
   * Answers to attempts sent under the current limit, and how many failed: `settled` as the
   * tallies take them (see unsettled), `arrived` as they came back (quick failures first).
   */
  private level = emptyLevel();
  /**
   * Answers not yet in the failure tallies: attempts started so recently that others started with
   * them may still be out. Counted at once, the quick answers (an instant 503) would outnumber the
   * slow ones (a 200 after 100 ms) at every level the limit only just reached, and an endpoint
   * failing a third of its requests whatever its load would read as failing more with each step up.
   */
  private readonly unsettled = new StartOrder<{
    startedAt: number;
    arrivedAt: number;
    sentUnder: LimitSetting;
    failed: boolean;
    latencyMs: number;
  }>();
  /** The slowest recent answer (fading, see SLOWEST_HALF_LIFE_MS): how long answers to one start may spread. */
  private slowest = { ms: 0, at: 0 };
  private readonly history = new LevelHistory();
  /** The limit at which the endpoint last showed overload; undefined once it has taken more. */
  private overloadedAt: number | undefined;
  private calmWindows = 0;
  /** The epoch whose last window would have grown the limit, but for this process's use of it. */
  private unusedHereAt: number | undefined;
  /** Steps up to this or above wait for PROBE_WINDOWS calm windows and probeWaitMs. */
  private patientFrom = Number.POSITIVE_INFINITY;
  /** How long to hold before such a step. */
  private probeWaitMs = 0;

  constructor(
    private readonly settings: AdaptiveLimitSettings,
    private readonly now: () => number,
  ) {
    this.value = this.clamp(settings.start);
    this.changedAt = now();
  }

  /** The limit now. */
  get limit(): number {
    return this.value;
  }

  /** What an attempt starting now is sent under: its sample hands this back. */
  get current(): LimitSetting {
    return { epoch: this.epoch, limit: this.value };
  }

  /** Takes a limit learned elsewhere (another worker process, via the queue); true when it changed. */
  adopt(limit: number): boolean {
    // A value no process could have written (unparsable in the queue) is no limit to take.
    if (!Number.isFinite(limit)) return false;
    const next = this.clamp(limit);
    if (next === this.value) return false;
    this.value = next;
    this.changed();
    return true;
  }

  /**
   * Takes a cut another process made (the queue's limit fell below what this one last knew, the
   * level it was overloaded at): as a cut of its own, so slow start ends and the way back up to that
   * level is patient. True when the limit changed.
   */
  adoptCut(limit: number, overloadedAt = this.value): boolean {
    if (!Number.isFinite(limit)) return false;
    const next = this.clamp(limit);
    if (next >= this.value) return false;
    const level = Math.min(this.value, overloadedAt);
    this.slowStart = false;
    this.overloadedAt = level;
    this.patientFrom = Math.min(this.patientFrom, level);
    this.probeWaitMs = 0;
    return this.set(next);
  }

  /** Learns from one finished attempt; true when the limit changed. */
  observe(sample: LimitSample): boolean {
    // Overloads cut at once and neutral answers say nothing: neither is tallied.
    if (sample.signal === "neutral") return false;
    // A broken clock or latency would stop every answer from settling, and every latency cut.
    if (!Number.isFinite(sample.startedAt) || !Number.isFinite(sample.latencyMs)) return false;
    // Every failure and answer joins the tally of the limit it was sent under, once settled.
    if (sample.signal !== "overload") this.hold(sample);
    // Started before the last change: it decides nothing now. One started in the change's own
    // millisecond may still count in the window (the clock cannot tell; the tallies can).
    if (sample.startedAt < this.changedAt) return false;
    // A hard refusal marks its own level: only the step back up to it is patient.
    if (sample.signal === "overload") return this.cut(OVERLOAD_BACKOFF, 0, this.value);

    const failed = sample.signal === "failure";
    if (sample.sentUnder.epoch === this.epoch) tallyOne(this.level.arrived, failed);
    this.window.count += 1;
    if (!failed) {
      this.window.answered += 1;
      this.window.latencySum += sample.latencyMs;
    }
    this.window.busiest = Math.max(this.window.busiest, sample.inFlight);
    this.window.firstStartedAt = Math.min(this.window.firstStartedAt, sample.startedAt);
    if (this.window.count < this.value) return false;
    const { count, answered, latencySum, busiest, firstStartedAt } = this.window;
    this.resetWindow();
    const now = this.now();
    const tookMs = now - firstStartedAt;
    // As after a latency rise, the step back up waits a while: failures that take seconds to come
    // back (a 504) would otherwise see the limit return to the failing level within a window.
    if (this.failuresAreLoad())
      return this.cut(OVERLOAD_BACKOFF, Math.min(MAX_PROBE_WAIT_MS, PROBE_PATIENCE * tookMs), this.value);
    // A window of failures only says nothing about latency, nor that more would be answered.
    if (answered === 0) return false;
    // Growth must be earned: a window that never used half the limit says nothing about more.
    const used = busiest * 2 >= this.value;

    const below = this.history.latencyBelow(this.value);
    const meanMs = latencySum / answered;
    const bound = below === undefined ? Number.POSITIVE_INFINITY : below.meanMs * TOLERANCE + SLACK_MS;
    if (meanMs > bound) {
      const ratio = Math.max(LATENCY_BACKOFF_MIN, Math.min(LATENCY_BACKOFF_MAX, bound / meanMs));
      // Latency rises before the level where it shows: every step above the cut is patient.
      const next = this.clamp(Math.floor(this.value * ratio));
      return this.cut(ratio, Math.min(MAX_PROBE_WAIT_MS, PROBE_PATIENCE * tookMs), next + 1);
    }
    // Failures not yet judged at this limit (too few settled): growing now would outrun the
    // judgement, and an endpoint failing most requests would climb while its answers settle.
    if (answered < count && this.level.settledSince < this.value) return false;
    if (!used) {
      // Other processes may hold the rest of the limit: usedAcrossProcesses can tell.
      this.unusedHereAt = this.epoch;
      return false;
    }
    return this.grow();
  }

  /**
   * True when the last window would have grown the limit, had this process alone had half of it
   * in flight. Worker processes serving one queue share its limit, so with three or more none may
   * ever hold half of it: the queue's count of attempts in flight, across processes, decides then.
   */
  get wantsUseAcrossProcesses(): boolean {
    return this.unusedHereAt === this.epoch;
  }

  /**
   * Gives the queue's attempts in flight across processes, read after such a window: grows the
   * limit as a window used here would, when they fill half of it. True when the limit changed.
   */
  usedAcrossProcesses(inFlight: number): boolean {
    if (this.unusedHereAt !== this.epoch) return false;
    this.unusedHereAt = undefined;
    return inFlight * 2 >= this.value && this.grow();
  }

  /**
   * Whether this limit's failures are load, by the settled tally or by the arrived one. The arrived
   * tally over-counts quick failures by at most the attempts still out, so those (at most `limit`)
   * are counted as answered, and it is only measured against the rate below (no shortcut on a
   * single failure): it errs towards keeping the limit, and it does not wait, as the settled tally
   * does, for a slow answer's peers (one 8-second 200 held it back for seconds while every attempt
   * above the limit failed).
   */
  private failuresAreLoad(): boolean {
    const { settled, arrived } = this.level;
    return (
      this.history.failuresAreLoad(this.value, settled.samples, settled.failures) ||
      this.history.failuresClearlyAboveBelow(this.value, arrived.samples + this.value, arrived.failures)
    );
  }

  /**
   * Keeps an answer until the attempts started with it have had time to answer too (started more
   * than the slowest recent spread ago), then tallies it: so, answers slower than that aside, each
   * tally counts failures at their true rate, not the quick ones first.
   */
  private hold(sample: LimitSample): void {
    const now = this.now();
    this.unsettled.add({
      startedAt: sample.startedAt,
      arrivedAt: now,
      sentUnder: sample.sentUnder,
      failed: sample.signal === "failure",
      latencyMs: sample.latencyMs,
    });
    // Since its start, not only the HTTP exchange: the time before the request (loading the
    // delivery) spreads the answers to one start as much.
    const spreadMs = Math.max(sample.latencyMs, now - sample.startedAt);
    const faded = this.slowest.ms * 0.5 ** (Math.max(0, now - this.slowest.at) / SLOWEST_HALF_LIFE_MS);
    this.slowest = { ms: Math.max(spreadMs, faded), at: now };
    this.settle(now);
  }

  private settle(now: number): void {
    for (const answer of this.unsettled.takeStartedBefore(now - this.slowest.ms)) {
      // At its own time: an answer kept through a quiet spell is not newer than the counts it joins.
      this.history.record(
        answer.sentUnder.limit,
        answer.failed ? { failed: true } : { failed: false, latencyMs: answer.latencyMs },
        answer.arrivedAt,
      );
      if (answer.sentUnder.epoch !== this.epoch) continue;
      this.level.settledSince += 1;
      tallyOne(this.level.settled, answer.failed);
    }
  }

  private grow(): boolean {
    if (this.overloadedAt !== undefined && this.value >= this.overloadedAt) {
      // A calm window at the limit that once overloaded it: the endpoint takes more now.
      this.overloadedAt = undefined;
      this.patientFrom = Number.POSITIVE_INFINITY;
    }
    let next = this.value + 1;
    if (this.slowStart) next = this.value * 2;
    else if (next >= this.patientFrom) {
      this.calmWindows += 1;
      if (this.calmWindows < PROBE_WINDOWS || this.now() - this.changedAt < this.probeWaitMs) return false;
    }
    return this.set(next);
  }

  private cut(ratio: number, probeWaitMs: number, patientFrom: number): boolean {
    this.slowStart = false;
    this.probeWaitMs = probeWaitMs;
    this.patientFrom = patientFrom;
    this.overloadedAt = this.value;
    const changed = this.set(Math.floor(this.value * ratio));
    // At the floor nothing changes, but answers to attempts already sent still count once only.
    this.changed();
    return changed;
  }

  private set(limit: number): boolean {
    const next = this.clamp(limit);
    if (next === this.value) return false;
    this.value = next;
    this.changed();
    return true;
  }

  private changed(): void {
    this.epoch += 1;
    this.changedAt = this.now();
    this.resetWindow();
    this.level = emptyLevel();
    this.calmWindows = 0;
  }

  private resetWindow(): void {
    this.window = emptyWindow();
  }

  private clamp(limit: number): number {
    return Math.max(this.settings.floor, Math.min(this.settings.max, Math.round(limit)));
  }
}

/** A limit's tallies: settled and arrived answers (halved past LEVEL_MEMORY), and every answer settled since the change. */
function emptyLevel() {
  return { settled: { samples: 0, failures: 0 }, arrived: { samples: 0, failures: 0 }, settledSince: 0 };
}

/** Counts one answer into a tally. */
function tallyOne(tally: { samples: number; failures: number }, failed: boolean): void {
  tally.samples += 1;
  if (failed) tally.failures += 1;
  if (tally.samples > LEVEL_MEMORY) {
    // A limit held for long: recent attempts keep weight enough to show a change in failures.
    tally.samples /= 2;
    tally.failures /= 2;
  }
}

/** Attempts counted since the window began: all of them, the answered ones (their latency), the most in flight. */
function emptyWindow() {
  return { count: 0, answered: 0, latencySum: 0, busiest: 0, firstStartedAt: Number.POSITIVE_INFINITY };
}
