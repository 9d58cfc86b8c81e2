import { type DemoBackend, startBackend } from "./backend.js";
import { checkOutcome } from "./expected.js";
import { type DemoReceivers, startDemoReceivers } from "./receivers.js";
import { renderReport } from "./report.js";
import { runScenario } from "./scenario.js";
import { describeTimings, loggedTrouble } from "./timings.js";

// `pnpm demo`: the reference scenario through real Hookline processes. stdout holds only what must
// read the same on every backend; everything about this run (backend, timings, logs) goes to stderr.
const say = (line: string) => process.stderr.write(`demo: ${line}\n`);
const began = Date.now();
let receivers: DemoReceivers | undefined;
let starting: Promise<DemoBackend> | undefined;
let backend: DemoBackend | undefined;

// A backend still starting is awaited, then stopped: its processes and data dir must not outlive us.
const cleanup = async () => {
  const started = await starting?.catch(() => undefined);
  await started?.stop();
  await receivers?.close();
};
let interrupted = false;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    if (interrupted) process.exit(130);
    interrupted = true;
    say(`${signal}: stopping (again to quit at once)`);
    void cleanup().finally(() => process.exit(130));
  });
}

try {
  receivers = await startDemoReceivers();
  starting = startBackend(process.env);
  backend = await starting;
  say(`backend: ${backend.description}; ready after ${Date.now() - began} ms`);
  const outcome = await runScenario(backend.address, receivers.urls);
  // Stop the service before counting what the receivers saw, so a late duplicate would be counted.
  const stopProblems = await backend.stop();
  const tallies = receivers.tally(outcome.secrets);
  process.stdout.write(renderReport(outcome, tallies));
  for (const line of describeTimings(outcome)) say(line);
  const trouble = loggedTrouble(backend.processes);
  say(trouble.length === 0 ? "no warnings or errors in the service logs" : "service logged:");
  for (const line of trouble) process.stderr.write(`  ${line}\n`);
  const problems = [...checkOutcome(outcome, tallies), ...stopProblems];
  if (problems.length > 0) {
    say(`FAILED: the outcome differs from the expected one:\n  - ${problems.join("\n  - ")}`);
    process.exitCode = 1;
  } else {
    say("outcome as expected");
  }
} catch (error) {
  // After a signal, the error is only the service going away under the scenario.
  if (!interrupted) say(`FAILED: ${error instanceof Error ? error.message : String(error)}`);
  for (const { name, process: child } of interrupted ? [] : (backend?.processes ?? [])) {
    process.stderr.write(`--- last lines ${name} logged ---\n${child.log.slice(-20).join("")}`);
  }
  process.exitCode = 1;
} finally {
  await cleanup();
  say(`elapsed ${Date.now() - began} ms`);
}
