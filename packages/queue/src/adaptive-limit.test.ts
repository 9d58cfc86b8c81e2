import assert from "node:assert/strict";
import { test } from "node:test";
import { AdaptiveLimit, type LimitSetting, type LoadSignal } from "./adaptive-limit.js";
import { seeded } from "./seeded-random.js";

const SETTINGS = { floor: 1, start: 4, max: 50 };

/** How a simulated endpoint answers an attempt that arrives with n in flight (itself included). */
type Endpoint = (n: number) => { latencyMs: number; signal: LoadSignal };

/**
 * An endpoint with an endless backlog, served under a limiter on a simulated clock: attempts start
 * whenever fewer than the limit are in flight. run() records how long (simulated ms) each limit
 * held after settleMs.
 */
function simulation(endpoint: Endpoint) {
  const clock = { now: 0 };
  const limiter = new AdaptiveLimit(SETTINGS, () => clock.now);
  const inFlight: {
    startedAt: number;
    sentUnder: LimitSetting;
    doneAt: number;
    latencyMs: number;
    signal: LoadSignal;
    n: number;
  }[] = [];
  const heldMs = new Map<number, number>();
  const run = (untilMs: number, settleMs = 0) => {
    while (clock.now < untilMs) {
      while (inFlight.length < limiter.limit) {
        const n = inFlight.length + 1;
        const answer = endpoint(n);
        inFlight.push({
          startedAt: clock.now,
          sentUnder: limiter.current,
          doneAt: clock.now + answer.latencyMs,
          n,
          ...answer,
        });
      }
      inFlight.sort((a, b) => a.doneAt - b.doneAt);
      const done = inFlight.shift();
      if (!done) break;
      if (done.doneAt > settleMs)
        heldMs.set(
          limiter.limit,
          (heldMs.get(limiter.limit) ?? 0) + done.doneAt - Math.max(clock.now, settleMs),
        );
      clock.now = done.doneAt;
      limiter.observe({
        startedAt: done.startedAt,
        sentUnder: done.sentUnder,
        latencyMs: done.latencyMs,
        signal: done.signal,
        inFlight: done.n,
      });
    }
  };
  return { limiter, heldMs, clock, run };
}

function simulate(endpoint: Endpoint, untilMs: number, settleMs = 0) {
  const sim = simulation(endpoint);
  sim.run(untilMs, settleMs);
  return sim;
}

/** The limit held at least half the time. */
function medianLimit(heldMs: Map<number, number>): number {
  const total = [...heldMs.values()].reduce((a, b) => a + b, 0);
  let seen = 0;
  for (const [limit, ms] of [...heldMs].sort((a, b) => a[0] - b[0])) {
    seen += ms;
    if (seen >= total / 2) return limit;
  }
  return Number.NaN;
}

function share(heldMs: Map<number, number>, which: (limit: number) => boolean): number {
  const total = [...heldMs.values()].reduce((a, b) => a + b, 0);
  return [...heldMs].filter(([limit]) => which(limit)).reduce((a, [, ms]) => a + ms, 0) / total;
}

test("a fast endpoint takes the limit up to the ceiling", () => {
  const { limiter } = simulate(() => ({ latencyMs: 2, signal: "ok" }), 2_000);
  assert.equal(limiter.limit, 50);
});

test("an endpoint that slows down above 8 in flight holds the limit near 8", () => {
  const { heldMs } = simulate((n) => ({ latencyMs: n > 8 ? 600 : 30, signal: "ok" }), 120_000, 20_000);
  assert.equal(medianLimit(heldMs), 8, JSON.stringify([...heldMs]));
  assert.ok(share(heldMs, (l) => l > 8) < 0.3, `mostly not above 8: ${JSON.stringify([...heldMs])}`);
});

test("an endpoint that answers 429 above 4 in flight holds the limit at or below 4", () => {
  const { heldMs } = simulate(
    (n) => (n > 4 ? { latencyMs: 5, signal: "overload" } : { latencyMs: 50, signal: "ok" }),
    120_000,
    20_000,
  );
  assert.equal(medianLimit(heldMs), 4, JSON.stringify([...heldMs]));
  assert.ok(share(heldMs, (l) => l > 4) < 0.1, JSON.stringify([...heldMs]));
});

test("an endpoint that fails a quarter of its requests whatever its load keeps a high limit, for ten minutes", () => {
  for (const seed of [1, 2, 3]) {
    const random = seeded(seed);
    // Ten minutes: what was learned at lower limits must still hold long after the limit left them.
    const { heldMs } = simulate(
      () => (random() < 0.25 ? { latencyMs: 3, signal: "failure" } : { latencyMs: 100, signal: "ok" }),
      600_000,
      60_000,
    );
    assert.equal(
      share(heldMs, (l) => l < 40),
      0,
      `seed ${seed}: ${JSON.stringify([...heldMs])}`,
    );
  }
});

test("an endpoint whose failures come back at once, failing up to 45% whatever its load, keeps a high limit", () => {
  // An instant 503 arrives before the 200s sent with it: counted as they come, each level the limit
  // just reached looked more failing than the one below (seen: 30% held about 15, 40% about 4).
  for (const rate of [0.3, 0.4, 0.45]) {
    const random = seeded(31);
    const { heldMs } = simulate(
      () => (random() < rate ? { latencyMs: 3, signal: "failure" } : { latencyMs: 100, signal: "ok" }),
      300_000,
      60_000,
    );
    assert.ok(medianLimit(heldMs) >= 45, `${rate}: ${JSON.stringify([...heldMs])}`);
  }
});

test("an endpoint failing a quarter of its requests for five minutes that starts failing above 8 is cut", () => {
  const random = seeded(4);
  const { limiter, clock, run } = simulation((n) =>
    (clock.now > 300_000 && n > 8) || random() < 0.25
      ? { latencyMs: 100, signal: "failure" }
      : { latencyMs: 100, signal: "ok" },
  );
  run(300_000);
  assert.equal(limiter.limit, 50);
  // Five minutes of attempts at 50 must not outweigh what it does now (seen: cut in 0.3 s; 6.8 s
  // when the tally at 50 kept all five minutes).
  run(clock.now + 2_000);
  assert.ok(limiter.limit <= 16, `still ${limiter.limit}`);
});

test("an endpoint held at the ceiling for five minutes that turns forty times slower is cut", () => {
  const { limiter, clock, run } = simulation(() => ({
    latencyMs: clock.now < 300_000 ? 100 : 4_000,
    signal: "ok",
  }));
  run(300_000);
  assert.equal(limiter.limit, 50);
  run(clock.now + 30_000);
  assert.ok(limiter.limit <= 10, `still ${limiter.limit}: the unloaded latency from minutes ago is the bar`);
});

test("an endpoint that fails most of its requests, whatever its load, is held near one in flight", () => {
  const random = seeded(9);
  const { heldMs } = simulate(
    () => (random() < 0.75 ? { latencyMs: 3, signal: "failure" } : { latencyMs: 20, signal: "ok" }),
    40_000,
    20_000,
  );
  assert.ok(medianLimit(heldMs) <= 2, JSON.stringify([...heldMs]));
});

test("failures that come back in no time, in step with their peers, are not read as load", () => {
  // A refused connection answers in 0 ms: it must not settle before the 200s started with it.
  const random = seeded(33);
  const { heldMs } = simulate(
    () => (random() < 0.4 ? { latencyMs: 0, signal: "failure" } : { latencyMs: 20, signal: "ok" }),
    120_000,
    30_000,
  );
  assert.ok(medianLimit(heldMs) >= 45, JSON.stringify([...heldMs]));
});

test("an endpoint that answers 503 above 8 in flight is held there even when a few answers take seconds", () => {
  // One 200 in 200 takes 8 s: the failures above 8 must not wait for its peers to be judged.
  const random = seeded(2);
  const { heldMs } = simulate(
    (n) =>
      n > 8
        ? { latencyMs: 5, signal: "failure" }
        : { latencyMs: random() < 0.005 ? 8_000 : 50, signal: "ok" },
    120_000,
    20_000,
  );
  assert.ok(share(heldMs, (l) => l > 8) < 0.1, JSON.stringify([...heldMs]));
});

test("an endpoint whose failures above 8 take 2 s (a 504) is not back above 8 right after each cut", () => {
  // Cut after a window of slow failures, the limit used to step back within a fraction of a second
  // and sat above 8 for 90% of the time, a fifth of its attempts failing.
  const { heldMs } = simulate(
    (n) => (n > 8 ? { latencyMs: 2_000, signal: "failure" } : { latencyMs: 50, signal: "ok" }),
    120_000,
    20_000,
  );
  assert.ok(share(heldMs, (l) => l > 8) < 0.5, JSON.stringify([...heldMs]));
});

test("an endpoint failing most of its requests at once, its answers slow and varying, is held near one", () => {
  // Its answers take seconds to settle (the slow tail): the limit must not climb meanwhile.
  const random = seeded(12);
  const { heldMs } = simulate(
    () =>
      random() < 0.75
        ? { latencyMs: 2, signal: "failure" }
        : { latencyMs: varying(random, 50), signal: "ok" },
    120_000,
    30_000,
  );
  assert.ok(medianLimit(heldMs) <= 2, JSON.stringify([...heldMs]));
});

test("an endpoint that answers 503 above 4 in flight holds the limit near 4", () => {
  const { heldMs } = simulate(
    (n) => (n > 4 ? { latencyMs: 5, signal: "failure" } : { latencyMs: 50, signal: "ok" }),
    120_000,
    20_000,
  );
  assert.ok(medianLimit(heldMs) <= 5, JSON.stringify([...heldMs]));
  assert.ok(share(heldMs, (l) => l > 6) < 0.1, JSON.stringify([...heldMs]));
});

test("an endpoint failing at random that also fails above 8 in flight holds the limit near 8", () => {
  const random = seeded(7);
  const { heldMs } = simulate(
    (n) => (n > 8 || random() < 0.2 ? { latencyMs: 5, signal: "failure" } : { latencyMs: 40, signal: "ok" }),
    180_000,
    60_000,
  );
  const median = medianLimit(heldMs);
  assert.ok(median >= 6 && median <= 10, JSON.stringify([...heldMs]));
});

/** A latency drawn around medianMs with a long tail: lognormal, one answer in a hundred ten times the median. */
function varying(random: () => number, medianMs: number): number {
  const normal = Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  return medianMs * Math.exp(normal);
}

test("an endpoint whose latency varies by itself (a cache hit, then a miss) keeps a high limit", () => {
  const random = seeded(21);
  const { heldMs } = simulate(() => ({ latencyMs: varying(random, 30), signal: "ok" }), 120_000, 30_000);
  assert.ok(medianLimit(heldMs) >= 40, JSON.stringify([...heldMs]));
});

test("an endpoint whose latency varies and rises 20 ms with each request above 8 is held near 10", () => {
  const random = seeded(23);
  const { heldMs } = simulate(
    (n) => ({ latencyMs: Math.max(0, n - 8) * 20 + varying(random, 30), signal: "ok" }),
    120_000,
    30_000,
  );
  const median = medianLimit(heldMs);
  assert.ok(median >= 8 && median <= 14, JSON.stringify([...heldMs]));
});

test("a hanging endpoint takes the limit to the floor, and it climbs again when the endpoint answers", () => {
  let hanging = false;
  const { limiter, clock, run } = simulation(() =>
    hanging ? { latencyMs: 1_000, signal: "overload" } : { latencyMs: 10, signal: "ok" },
  );
  run(1_000);
  assert.equal(limiter.limit, 50, "a fast start first");
  hanging = true;
  run(clock.now + 7_000);
  assert.equal(limiter.limit, 1, "six rounds of timeouts halve 50 down to the floor");
  hanging = false;
  run(clock.now + 3_000);
  assert.ok(limiter.limit >= 20, `climbs again once it answers: ${limiter.limit}`);
});

test("a batch of timeouts sent under one limit cuts it once, not once each", () => {
  let now = 0;
  const limiter = new AdaptiveLimit({ ...SETTINGS, start: 16 }, () => now);
  const sentUnder = limiter.current;
  now = 1_000;
  for (let i = 0; i < 16; i++)
    limiter.observe({ startedAt: 0, sentUnder, latencyMs: 1_000, signal: "overload", inFlight: 16 });
  assert.equal(limiter.limit, 8);
});

test("a limit in no real use does not grow", () => {
  let now = 0;
  const limiter = new AdaptiveLimit(SETTINGS, () => now);
  for (let i = 0; i < 1_000; i++) {
    now += 100;
    limiter.observe({
      startedAt: now - 10,
      sentUnder: limiter.current,
      latencyMs: 10,
      signal: "ok",
      inFlight: 1,
    });
  }
  assert.equal(limiter.limit, 4, "one attempt at a time says nothing about four or more");
});

test("a limit this process holds a third of grows only while the queue's attempts across processes fill it", () => {
  // Three worker processes share the queue's limit: each has about a third of it in flight.
  const serve = (acrossProcesses: (limit: number) => number) => {
    let now = 0;
    const limiter = new AdaptiveLimit(SETTINGS, () => now);
    for (let i = 0; i < 3_000; i++) {
      now += 2;
      const sample = {
        startedAt: now - 10,
        sentUnder: limiter.current,
        latencyMs: 10,
        signal: "ok" as const,
        inFlight: Math.ceil(limiter.limit / 3),
      };
      if (!limiter.observe(sample) && limiter.wantsUseAcrossProcesses)
        limiter.usedAcrossProcesses(acrossProcesses(limiter.limit));
    }
    return limiter.limit;
  };
  assert.equal(
    serve((limit) => limit),
    50,
    "the three together fill it: it grows to the ceiling",
  );
  // 4 in flight of 8 would prove 8 used; a third of 8 (3) does not.
  assert.equal(
    serve((limit) => Math.ceil(limit / 3)),
    8,
    "nobody else uses the rest: it stops at 8",
  );
});

test("answers that say nothing about load (a 404) change nothing", () => {
  let now = 0;
  const limiter = new AdaptiveLimit(SETTINGS, () => now);
  for (let i = 0; i < 100; i++) {
    now += 10;
    limiter.observe({
      startedAt: now - 5,
      sentUnder: limiter.current,
      latencyMs: 5_000,
      signal: "neutral",
      inFlight: 4,
    });
  }
  assert.equal(limiter.limit, 4);
});

test("an adopted limit is kept within the floor and the ceiling", () => {
  const limiter = new AdaptiveLimit(SETTINGS, () => 0);
  assert.equal(limiter.adopt(500), true);
  assert.equal(limiter.limit, 50);
  limiter.adopt(0);
  assert.equal(limiter.limit, 1);
  assert.equal(limiter.adopt(1), false);
});
