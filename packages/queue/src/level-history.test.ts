import assert from "node:assert/strict";
import { test } from "node:test";
import { LevelHistory } from "./level-history.js";
import { seeded } from "./seeded-random.js";

const MINUTE = 60_000;

/** A history in which level 1 saw `samples` attempts at time 0, a share `failing` of them failed. */
function historyAtOne(samples: number, failing: number, latencyMs = 100): LevelHistory {
  const history = new LevelHistory();
  for (let i = 0; i < samples; i++)
    history.record(1, i < samples * failing ? { failed: true } : { failed: false, latencyMs }, 0);
  return history;
}

test("what was seen with fewer in flight still counts long after the limit left that level", () => {
  const history = historyAtOne(40, 0.25);
  // Ten minutes on at 50 in flight, failing as often as at 1: the endpoint's own failures.
  for (let i = 0; i < 1_000; i++)
    history.record(50, i % 4 === 0 ? { failed: true } : { failed: false, latencyMs: 100 }, 10 * MINUTE);
  assert.equal(history.failuresAreLoad(50, 50, 13), false);
  assert.equal(history.failuresAreLoad(60, 1_000, 400), true, "a clear rise above what 1 and 50 showed");
  assert.equal(history.latencyBelow(50)?.meanMs, 100);
});

test("failures at the rate seen below are not load, even when the growing tally is judged after every window", () => {
  let wronglyCut = 0;
  const runs = 200;
  for (let seed = 1; seed <= runs; seed++) {
    const random = seeded(seed);
    const history = new LevelHistory();
    for (let i = 0; i < 60; i++)
      history.record(4, random() < 0.25 ? { failed: true } : { failed: false, latencyMs: 10 }, 0);
    let samples = 0;
    let failures = 0;
    for (let check = 1; check <= 200; check++) {
      for (let i = 0; i < 50; i++) {
        samples += 1;
        if (random() < 0.25) failures += 1;
      }
      if (history.failuresAreLoad(50, samples, failures)) {
        wronglyCut += 1;
        break;
      }
    }
  }
  assert.ok(wronglyCut / runs < 0.1, `${wronglyCut} of ${runs} runs cut a limit that failures did not load`);
});

test("failures well above the rate seen below are load", () => {
  const history = historyAtOne(40, 0);
  // Half of the attempts at 8 fail, none did at 1: a few windows of 8 show it.
  let samples = 0;
  let failures = 0;
  let windows = 0;
  while (!history.failuresAreLoad(8, samples, failures)) {
    windows += 1;
    samples += 8;
    failures += 4;
    assert.ok(windows < 6, "seen within five windows");
  }
});

test("too little seen below a level: any failure is taken for load", () => {
  const history = historyAtOne(4, 0);
  assert.equal(history.failuresAreLoad(8, 50, 1), true);
  assert.equal(history.failuresAreLoad(8, 50, 0), false);
});

test("the measured test alone takes no shortcut: with little seen below, or mostly failing below, one failure is not enough", () => {
  assert.equal(historyAtOne(4, 0).failuresClearlyAboveBelow(8, 50, 1), false);
  const mostlyFailing = historyAtOne(100, 0.7);
  assert.equal(mostlyFailing.failuresAreLoad(8, 50, 1), true);
  assert.equal(mostlyFailing.failuresClearlyAboveBelow(8, 50, 1), false);
  // Well above the rate below, it says so as failuresAreLoad does.
  assert.equal(historyAtOne(1_000, 0.1).failuresClearlyAboveBelow(8, 100, 40), true);
});

test("the latency bar is the lowest levels measured, not the slower ones above them", () => {
  const history = historyAtOne(12, 0, 100);
  for (let i = 0; i < 200; i++) history.record(20, { failed: false, latencyMs: 1_000 }, 5 * MINUTE);
  assert.equal(history.latencyBelow(30)?.meanMs, 100);
  assert.equal(history.latencyBelow(1), undefined, "nothing below the floor");
});

test("a level's old counts fade when it is visited again, so what it does now outweighs the past", () => {
  const history = historyAtOne(40, 0, 100);
  for (let i = 0; i < 40; i++) history.record(1, { failed: false, latencyMs: 1_000 }, 5 * MINUTE);
  const meanMs = history.latencyBelow(2)?.meanMs ?? 0;
  assert.ok(meanMs > 900, `the new latency dominates: ${meanMs}`);
});
