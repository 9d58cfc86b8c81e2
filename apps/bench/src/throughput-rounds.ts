import type { TestSettings } from "@hookline/testkit";
import { type BackendResult, runBackend } from "./backend-run.js";
import type { CeilingResult } from "./ceiling.js";
import type { BackendKind, BenchOptions } from "./options.js";
import type { ReceiverHandle } from "./receiver.js";
import { type ReferenceQueue, runReference } from "./reference/run.js";
import type { ComparedPair } from "./sections-report.js";

/** A Hookline run with its round and the plain POST loop measured at that round's start. */
export interface RoundRun {
  round: number;
  ceiling: CeilingResult;
  result: BackendResult;
}

/** Bounds one run in time; on failure it stops every process and rethrows. */
export type Bounded = <T>(work: Promise<T>, what: string) => Promise<T>;

/** Each Hookline backend is compared with the reference design on the same kind of queue. */
const MATCHING: Record<BackendKind, ReferenceQueue> = { servers: "redis", embedded: "postgres" };
const REFERENCE_NAME: Record<ReferenceQueue, string> = { redis: "Redis", postgres: "PostgreSQL" };

/** Which run of a pair goes first: the reference in odd rounds, Hookline in even ones. */
export function pairOrder(round: number): readonly ("reference" | "hookline")[] {
  // Always first, one side would always get the machine fresh (caches, frequency, the other
  // run's leftovers); alternating spreads that over both.
  return round % 2 === 1 ? ["reference", "hookline"] : ["hookline", "reference"];
}

/**
 * The throughput section: per round, Hookline servers with the reference on Redis, then Hookline
 * embedded with the reference on BullMQ's PostgreSQL backend, so each pair shares the machine's
 * mood; within a pair, the order alternates from round to round (pairOrder). Each round starts
 * with the plain POST loop (measureCeiling), so each run is divided by a ceiling measured next to
 * it, not by one from minutes before on a machine whose load has since changed.
 */
export async function runThroughputRounds(
  settings: TestSettings,
  backends: BackendKind[],
  withReference: boolean,
  options: BenchOptions,
  receiver: ReceiverHandle,
  bounded: Bounded,
  measureCeiling: () => Promise<CeilingResult>,
): Promise<{ pairs: ComparedPair[]; runs: RoundRun[]; ceilings: CeilingResult[] }> {
  const pairs: ComparedPair[] = [];
  const runs: RoundRun[] = [];
  const ceilings: CeilingResult[] = [];
  const order = (["servers", "embedded"] as const).filter((kind) => backends.includes(kind));
  for (let round = 1; round <= options.rounds; round++) {
    process.stderr.write(`round ${round}, plain POST loop:\n`);
    const ceiling = await bounded(measureCeiling(), "the plain POST loop");
    ceilings.push(ceiling);
    for (const kind of order) {
      const queue = MATCHING[kind];
      let reference: ComparedPair["reference"];
      let run: BackendResult | undefined;
      for (const side of pairOrder(round)) {
        if (side === "reference" && withReference) {
          process.stderr.write(`round ${round}, reference design on ${REFERENCE_NAME[queue]}:\n`);
          reference = await bounded(
            runReference(
              settings,
              queue,
              {
                events: options.events,
                endpoints: options.endpoints,
                inFlight: options.emitConcurrency,
                concurrency: options.referenceConcurrency,
              },
              receiver,
            ),
            `the reference run on ${REFERENCE_NAME[queue]}`,
          );
        } else if (side === "hookline") {
          process.stderr.write(`round ${round}, hookline ${kind}:\n`);
          run = await bounded(runBackend(settings, kind, options, receiver), `the ${kind} run`);
        }
      }
      if (!run) throw new Error(`round ${round} ran no hookline ${kind}`);
      runs.push({ round, ceiling, result: run });
      pairs.push({
        round,
        ceiling,
        reference,
        hookline: {
          label: `hookline ${kind}`,
          deliveries: run.deliveries,
          seconds: run.seconds,
          cpu: run.cpu,
        },
      });
    }
  }
  return { pairs, runs, ceilings };
}
