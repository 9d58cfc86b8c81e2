import { readTestSettings } from "@hookline/testkit";
import { stopAll, stopChildrenOnExit } from "./children.js";
import type { BackendKind } from "./options.js";
import { serversProblem } from "./reachable.js";
import { loadText, machineText } from "./report.js";
import { parseScaleOptions, SCALE_USAGE, type ScaleOptions } from "./scale-options.js";
import { startScaleReceiver } from "./scale-receiver.js";
import { backlogTable, fanOutTable, hangingTable, idleTable, rateTable } from "./scale-report.js";
import { runScaleBackend, type ScaleBackendResult } from "./scale-run.js";

// `pnpm bench:scale`: what endpoints cost while idle, and whether one endpoint's trouble reaches
// the others (issue 10), on each backend, against one receiver in its own process.

const out = (text = "") => process.stdout.write(`${text}\n`);

async function main(options: ScaleOptions): Promise<number> {
  out(machineText());
  out(`before: ${loadText()}`);
  out(
    `settings: ${options.endpoints} endpoints over ${options.tenants} tenants, idle windows of ${options.idleSeconds} s; ` +
      `${options.healthy} healthy endpoints x ${options.events} events; backlog ${options.backlog} at ${options.slowMs} ms ` +
      `(queued for at most ${options.fillTimeoutMs / 1000} s), ` +
      `${options.probes} probes ${options.probeGapMs} ms apart; rate ${options.rate}/s x ${options.burst}; ` +
      `sections: ${options.sections.join(", ")}`,
  );
  const backends: BackendKind[] = [];
  const skipped: string[] = [];
  for (const kind of options.backends) {
    const problem = kind === "servers" ? await serversProblem() : undefined;
    if (problem) skipped.push(`servers backend skipped: ${problem}`);
    else backends.push(kind);
  }
  for (const line of skipped) process.stderr.write(`${line}\n`);
  if (backends.length === 0) return 2;

  const receiver = await startScaleReceiver();
  const runs: ScaleBackendResult[] = [];
  const started = performance.now();
  for (const kind of backends) {
    process.stderr.write(`${kind}:\n`);
    runs.push(await runScaleBackend(readTestSettings(process.env), kind, options, receiver));
  }
  for (const text of [
    idleTable(runs),
    hangingTable(runs),
    backlogTable(runs),
    fanOutTable(runs),
    rateTable(runs),
  ]) {
    if (text) out(`\n${text}`);
  }
  for (const run of runs) for (const failure of run.failures) out(`\n${run.backend} ${failure}`);
  for (const line of skipped) out(`\n${line}`);
  out(`\nafter: ${loadText()}; the whole run took ${((performance.now() - started) / 1000).toFixed(0)} s`);
  await stopAll();
  return runs.some((run) => run.failures.length > 0) ? 1 : 0;
}

let options: ScaleOptions;
try {
  const parsed = parseScaleOptions(process.argv.slice(2));
  if (parsed === "help") {
    out(SCALE_USAGE);
    process.exit(0);
  }
  options = parsed;
} catch (error) {
  process.stderr.write(`${(error as Error).message}\n${SCALE_USAGE}\n`);
  process.exit(2);
}
stopChildrenOnExit();
main(options).then(
  (code) => process.exit(code),
  async (error: unknown) => {
    process.stderr.write(`bench:scale failed: ${error instanceof Error ? error.message : String(error)}\n`);
    await stopAll(5_000);
    process.exit(1);
  },
);
