import assert from "node:assert/strict";
import { once } from "node:events";
import { test } from "node:test";
import type { HooklineProcess } from "@hookline/testkit";
import { kind, type OwnServers, servers, startOwnServers } from "./backend.js";
import { runCluster } from "./cluster.js";
import { assertLedgerHolds } from "./run.js";
import { trace } from "./stream.js";

const CRASHES = servers ? 5 : 3;
const EXIT_AFTER = servers ? 50 : 40;
// The test-only hook: the api exits (137) right after the Nth Emit commits, before its queue add.
const HOOK = { HOOKLINE_FAULT_EXIT_AFTER_COMMIT: String(EXIT_AFTER) };
const NO_HOOK = { HOOKLINE_FAULT_EXIT_AFTER_COMMIT: "0" };

test(`the api killed between the store commit and the queue add: the sweeper delivers (${kind})`, async () => {
  const own: OwnServers | undefined = servers ? await startOwnServers() : undefined;
  const exitCodes: (number | null)[] = [];
  try {
    const { run, verdict } = await runCluster({
      scenario: `5. api exit after commit x${CRASHES}`,
      own,
      workers: 2,
      events: servers ? 400 : 240,
      perSecond: servers ? 30 : 15,
      apiEnv: HOOK,
      // Giving up leaves the stranded deliveries to the sweeper alone (so would a retry: a
      // duplicate Emit adds no job).
      onError: "give-up",
      async inject(run) {
        for (let k = 1; k <= CRASHES; k++) {
          // Embedded, the api is the standalone process, which dies whole.
          const victim = servers ? run.api : run.workers[0];
          if (!victim) throw new Error("no api process");
          const start = await exitOf(victim, 60_000);
          exitCodes.push(victim.child.exitCode);
          const release = run.stream.hold();
          trace(`api exit ${k}: ${run.stream.acked.size} acked, ${run.stream.uncertain.size} uncertain`);
          const env = k < CRASHES ? HOOK : NO_HOOK;
          if (servers) run.api = await run.startApi(env);
          else run.workers[0] = await run.startWorker(env);
          run.faults.push({ kind: "api exit after commit", start, end: Date.now() });
          release();
        }
      },
    });
    assertLedgerHolds(verdict);
    assert.deepEqual(exitCodes, Array(CRASHES).fill(137), "each exit was the hook's");
    assert.ok(
      verdict.strandedEvents >= CRASHES,
      `each crash strands at least the event it committed (${verdict.strandedEvents} stranded)`,
    );
    assert.deepEqual(run.exitedBeforeTeardown, []);
  } finally {
    await own?.dispose();
  }
});

/** Resolves with the time the process exited (at once if it already has). */
async function exitOf(proc: HooklineProcess, timeoutMs: number): Promise<number> {
  if (proc.child.exitCode !== null || proc.child.signalCode !== null) return Date.now();
  const timer = setTimeout(
    () => proc.child.emit("error", new Error(`no exit in ${timeoutMs} ms`)),
    timeoutMs,
  );
  try {
    await once(proc.child, "exit");
    return Date.now();
  } finally {
    clearTimeout(timer);
  }
}
