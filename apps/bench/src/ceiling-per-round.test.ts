import assert from "node:assert/strict";
import { test } from "node:test";
import type { BackendResult } from "./backend-run.js";
import { resultsTable } from "./report.js";
import { comparisonTable } from "./sections-report.js";

// Each run is divided by the plain POST loop of its own round, not by the first round's.

const ceiling = (perSecond: number) => ({ requests: perSecond, seconds: 1, perSecond });
const run = (label: string, perSecond: number) => ({
  label,
  deliveries: perSecond * 10,
  seconds: 10,
  cpu: new Map<string, number>(),
});
const backend = (perSecond: number): BackendResult => ({
  backend: "servers",
  deliveries: perSecond * 10,
  seconds: 10,
  secondsToLastRequest: 10,
  emitSeconds: 5,
  emitLatenciesMs: [1],
  cpu: new Map(),
  serverWork: undefined,
});
/** The cells of the table's rows whose first cell is `round`, split on two or more spaces. */
const cellsOf = (text: string, round: string) =>
  text
    .split("\n")
    .slice(2)
    .map((line) => line.trim().split(/\s{2,}/))
    .filter((cells) => cells[0] === round);

test("the comparison divides each round's runs by that round's plain POST rate", () => {
  const text = comparisonTable([
    {
      round: 1,
      ceiling: ceiling(20_000),
      reference: run("reference", 1000),
      hookline: run("hookline servers", 2000),
    },
    {
      round: 2,
      ceiling: ceiling(10_000),
      reference: run("reference", 1000),
      hookline: run("hookline servers", 2000),
    },
  ]);
  assert.deepEqual(
    cellsOf(text, "1").map((cells) => cells[6]),
    ["0.050", "0.100"],
  );
  assert.deepEqual(
    cellsOf(text, "2").map((cells) => cells[6]),
    ["0.100", "0.200"],
  );
});

test("the results table shows every round's plain POST loop and divides by it", () => {
  const text = resultsTable(
    [
      { round: 1, ceiling: ceiling(20_000), runs: [backend(2000)] },
      { round: 2, ceiling: ceiling(10_000), runs: [backend(2000)] },
    ],
    "adaptive (default)",
  );
  assert.deepEqual(
    cellsOf(text, "1").map((cells) => [cells[1], cells[5], cells.at(-1)]),
    [
      ["plain POST loop (undici, 64 in flight)", "20,000", "1.00"],
      ["hookline servers", "2,000", "0.100"],
    ],
  );
  assert.deepEqual(
    cellsOf(text, "2").map((cells) => [cells[1], cells[5], cells.at(-1)]),
    [
      ["plain POST loop (undici, 64 in flight)", "10,000", "1.00"],
      ["hookline servers", "2,000", "0.200"],
    ],
  );
});
