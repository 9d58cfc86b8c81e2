import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { readTestSettings } from "@hookline/testkit";
import { measureCeiling } from "./ceiling.js";
import { stopAll, stopChildrenOnExit, withDeadline } from "./children.js";
import { type EmitLatencyResult, runEmitLatency } from "./emit-latency-run.js";
import { DATA_JSON } from "./emit-load.js";
import {
  type BackendKind,
  type BenchOptions,
  PRODUCT_DEFAULT_CONCURRENCY,
  parseOptions,
  USAGE,
  UsageRequested,
} from "./options.js";
import { profilesUnder, summarizeProfile } from "./profile-summary.js";
import { measureQueueFloor } from "./queue-floor.js";
import { ratioSummaryLines } from "./ratio-summary.js";
import { serversProblem } from "./reachable.js";
import { startReceiverProcess } from "./receiver.js";
import { cpuTable, emitLine, loadText, machineText, resultsTable } from "./report.js";
import { RETRY_SCHEDULE_MS, type RetryResult, runRetryLateness } from "./retry-run.js";
import { BENCH_ENV } from "./run-support.js";
import { comparisonTable, emitLatencyTable, queueFloorTable, retryTable } from "./sections-report.js";
import { type Bounded, runThroughputRounds } from "./throughput-rounds.js";

// `pnpm bench`: the plain POST ceiling, then Hookline end to end on each backend interleaved with
// the reference design, then retry lateness and Emit latency, against one receiver in its own
// process. --only picks sections. Every child process is stopped however this ends.

const out = (text = "") => process.stdout.write(`${text}\n`);
const progress = (text: string) => process.stderr.write(`${text}\n`);

async function main(options: BenchOptions): Promise<number> {
  const concurrencyText =
    options.concurrency === undefined
      ? `${PRODUCT_DEFAULT_CONCURRENCY} (default)`
      : String(options.concurrency);
  out(machineText());
  out(`before: ${loadText()}`);
  out(
    `settings: ${options.events} events x ${options.endpoints} endpoints, ~${DATA_JSON.length} B data_json, ` +
      `${options.emitConcurrency} Emit RPCs in flight`,
  );
  const hooklineEnv = [
    `HOOKLINE_ENDPOINT_CONCURRENCY=${concurrencyText}`,
    ...Object.entries(BENCH_ENV).map(([name, value]) => `${name}=${value} (the receiver is local)`),
    ...Object.entries(options.env).map(([name, value]) => `${name}=${value}`),
  ];
  out(`hookline processes: ${hooklineEnv.join(", ")}; everything else at the product defaults`);

  const oldProfiles = new Set(
    options.profileDir && existsSync(options.profileDir) ? profilesUnder(options.profileDir) : [],
  );
  // Checked first, so a missing server is reported before minutes of other runs.
  const skipped: string[] = [];
  const backends: BackendKind[] = [];
  for (const kind of options.backends) {
    const problem = kind === "servers" ? await serversProblem() : undefined;
    if (!problem) backends.push(kind);
    else {
      skipped.push(
        "servers backend skipped: it needs a local PostgreSQL (user postgres, may create databases) " +
          `and Redis. ${problem}`,
      );
      progress(skipped.at(-1) ?? "");
    }
  }
  if (backends.length === 0) return 2;

  const receiver = await startReceiverProcess();
  const settings = readTestSettings(process.env);
  const bounded: Bounded = async (work, what) => {
    try {
      return await withDeadline(
        work,
        options.runTimeoutMs,
        `${what} took more than ${options.runTimeoutMs / 1000} s; stopped it`,
      );
    } catch (error) {
      const seen = await withDeadline(receiver.count(), 2_000, "").catch(() => undefined);
      // Stop the processes so the run unwinds and drops its database, then give up.
      await stopAll(5_000);
      await withDeadline(work, 30_000, "").catch(() => {});
      throw new Error(`${(error as Error).message}${seen ? `; ${progressText(seen)}` : ""}`);
    }
  };

  if (options.sections.has("throughput")) {
    // The ceiling POSTs a body the size of the webhook envelope Hookline sends.
    const body = JSON.stringify({
      type: "invoice.paid",
      timestamp: new Date().toISOString(),
      data: JSON.parse(DATA_JSON),
    });
    progress(`plain POST loop: ${options.ceilingRequests} requests of ${body.length} B to ${receiver.url}`);
    // The reference design keeps its rows in PostgreSQL whatever its queue: it needs the servers.
    const withReference = backends.includes("servers") || (await serversProblem()) === undefined;
    const { pairs, runs, ceilings } = await runThroughputRounds(
      settings,
      backends,
      withReference,
      options,
      receiver,
      bounded,
      () => measureCeiling(receiver, body, { requests: options.ceilingRequests }),
    );

    out();
    out(
      resultsTable(
        ceilings.map((ceiling, i) => ({
          round: i + 1,
          ceiling,
          runs: runs.filter((run) => run.round === i + 1).map((run) => run.result),
        })),
        concurrencyText,
      ),
    );
    out();
    for (const { result: run } of runs) {
      out(emitLine(run, options.events));
      if (run.serverWork) out(run.serverWork);
    }
    const cpu = cpuTable(
      pairs.flatMap((pair) => (pair.reference ? [pair.reference, pair.hookline] : [pair.hookline])),
    );
    if (cpu) {
      out();
      out("CPU during the measured window (100% = one core; * = every process of that name on the machine):");
      out(cpu);
    }
    out();
    out(
      `Hookline at its defaults against the reference design (PostgreSQL rows, a BullMQ queue per endpoint, ` +
        `worker concurrency ${options.referenceConcurrency}; servers ↔ reference on Redis, embedded ↔ reference on ` +
        `BullMQ's PostgreSQL backend), and against the plain POST loop of the same round (${ceilingsText(ceilings)}):`,
    );
    out(comparisonTable(pairs));
    if (options.profileDir)
      out(
        "--profile: only Hookline's processes were profiled, so this run's ratios to the reference are biased against Hookline",
      );
    // One ratio per round is as noisy as the machine: with several, their middle and spread.
    for (const line of ratioSummaryLines(pairs)) out(line);
    if (!withReference) out("reference design skipped: it needs the local PostgreSQL and Redis");
    if (backends.includes("servers")) {
      progress("BullMQ alone on Redis (the queue floor):");
      const floor = await bounded(
        measureQueueFloor(settings, {
          events: options.events,
          endpoints: options.endpoints,
          inFlight: options.emitConcurrency,
          concurrency: options.referenceConcurrency,
        }),
        "the queue floor",
      );
      out();
      out(queueFloorTable(floor, pairs));
    }
  }

  if (options.sections.has("retry")) {
    const results: RetryResult[] = [];
    for (const kind of backends) {
      progress(`retry lateness, ${kind}:`);
      results.push(
        await bounded(runRetryLateness(settings, kind, options, receiver), `the ${kind} retry run`),
      );
    }
    out();
    out(retryTable(results, RETRY_SCHEDULE_MS));
  }

  if (options.sections.has("emit")) {
    const results: EmitLatencyResult[] = [];
    for (const kind of backends) {
      progress(`Emit latency, ${kind}:`);
      results.push(await bounded(runEmitLatency(settings, kind, options, receiver), `the ${kind} Emit run`));
    }
    out();
    out(emitLatencyTable(results, options.emitRate, options.endpoints));
  }
  out(`\nafter: ${loadText()}`);
  for (const line of skipped) out(`\n${line}`);

  await stopAll();
  if (options.profileDir) {
    for (const path of profilesUnder(options.profileDir).filter((p) => !oldProfiles.has(p))) {
      out(`\n${summarizeProfile(path)}`);
    }
  }
  return 0;
}

/** Each round's plain POST rate, so a change in the machine between rounds shows. */
function ceilingsText(ceilings: readonly { perSecond: number }[]): string {
  return ceilings
    .map((c, i) => `round ${i + 1}: ${Math.round(c.perSecond).toLocaleString("en-US")} req/s`)
    .join(", ");
}

function progressText({ count, firstAt, lastAt }: { count: number; firstAt: number; lastAt: number }) {
  const rate =
    count > 1
      ? ` (${Math.round((count - 1) / ((lastAt - firstAt) / 1000))}/s between the first and the last)`
      : "";
  return `by then the receiver had counted ${count} requests of the measured run${rate}`;
}

let options: BenchOptions;
try {
  options = parseOptions(process.argv.slice(2));
  if (options.profileDir) options.profileDir = resolve(options.profileDir);
} catch (error) {
  const help = error instanceof UsageRequested;
  process.stderr.write(`${help ? "" : `${(error as Error).message}\n`}${USAGE}\n`);
  process.exit(help ? 0 : 2);
}
stopChildrenOnExit();
main(options).then(
  (code) => process.exit(code),
  async (error: unknown) => {
    process.stderr.write(`bench failed: ${error instanceof Error ? error.message : String(error)}\n`);
    await stopAll(5_000);
    process.exit(1);
  },
);
