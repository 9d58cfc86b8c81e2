import type { TestSettings } from "@hookline/testkit";
import { type BackendResult, runBackend } from "./backend-run.js";
import type { BackendKind, BenchOptions } from "./options.js";
import type { ReceiverHandle } from "./receiver.js";
import { type ReferenceQueue, runReference } from "./reference/run.js";
import type { ComparedPair } from "./sections-report.js";

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
 * mood; within a pair, the order alternates from round to round (pairOrder).
 */
export async function runThroughputRounds(
  settings: TestSettings,
  backends: BackendKind[],
  withReference: boolean,
  options: BenchOptions,
  receiver: ReceiverHandle,
  bounded: Bounded,
): Promise<{ pairs: ComparedPair[]; runs: BackendResult[] }> {
  const pairs: ComparedPair[] = [];
  const runs: BackendResult[] = [];
  const order = (["servers", "embedded"] as const).filter((kind) => backends.includes(kind));
  for (let round = 1; round <= options.rounds; round++) {
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
      runs.push(run);
      pairs.push({
        round,
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
  return { pairs, runs };
}
