import assert from "node:assert/strict";
import { test } from "node:test";
import type { HooklineProcess } from "@hookline/testkit";
import pg from "pg";
import { type OwnServers, servers, startOwnServers } from "./backend.js";
import { ENDPOINTS, runCluster } from "./cluster.js";
import { assertLedgerHolds } from "./run.js";
import { trace, until } from "./stream.js";

const EVENTS = 500;
const DOWN_MS = 3000;

test("PostgreSQL restarted mid-run: Emit answers UNAVAILABLE, nothing half-written, all recover alone", {
  skip: !servers && "the embedded store lives inside the Hookline process; there is no server to restart",
}, async () => {
  const own: OwnServers = await startOwnServers();
  let databaseUrl = "";
  let unavailableWhileDown = 0;
  // Processes that died of the restart; the test starts them again, as a supervisor would, so the
  // ledger can still be checked.
  const died: string[] = [];
  try {
    const { run, verdict } = await runCluster({
      scenario: "4. PostgreSQL restarted",
      own,
      workers: 2,
      events: EVENTS,
      perSecond: 40,
      behaviour: () => ({ kind: "answer", status: 200, delayMs: 2 + Math.floor(Math.random() * 20) }),
      async inject(run) {
        databaseUrl = run.deployment.databaseUrl ?? "";
        await until("20% of the events acked", () => run.stream.acked.size >= EVENTS * 0.2, 60_000);
        const start = Date.now();
        trace(`postgres down: ${run.stream.acked.size} acked, ${run.receiver.receipts.length} requests`);
        await own.postgres.crash();
        await new Promise((resolve) => setTimeout(resolve, DOWN_MS));
        unavailableWhileDown = run.stream.errors.get("Unavailable")?.count ?? 0;
        await own.postgres.start();
        const fault = { kind: "PostgreSQL crash and restart", start, end: Date.now() };
        run.faults.push(fault);
        await new Promise((resolve) => setTimeout(resolve, 2000));
        const exited = (p: HooklineProcess | undefined) =>
          p !== undefined && (p.child.exitCode !== null || p.child.signalCode !== null);
        if (exited(run.api)) {
          died.push("api");
          run.api = await run.startApi();
        }
        for (const [i, worker] of run.workers.entries()) {
          if (!exited(worker)) continue;
          died.push(`worker ${i}`);
          run.workers[i] = await run.startWorker();
        }
        if (died.length > 0) fault.end = Date.now();
        trace(`postgres back; died and restarted: ${died.join(", ") || "none"}`);
      },
    });
    assertLedgerHolds(verdict);
    assert.ok(unavailableWhileDown > 0, "Emit calls were made, and refused, while the database was down");
    assert.deepEqual(await halfWritten(databaseUrl, ENDPOINTS), []);
    assert.deepEqual(run.exitedBeforeTeardown, []);
    // Nothing died: the api refused Emit with UNAVAILABLE while the database was away, and every
    // process reconnected by itself.
    assert.deepEqual(died, [], "no process died");
    const codes = [...run.stream.errors.keys()];
    assert.deepEqual(codes, ["Unavailable"], `every refused Emit says UNAVAILABLE (saw ${codes.join(", ")})`);
  } finally {
    await own.dispose();
  }
});

/** Events without exactly their deliveries, and deliveries without their event, straight from the store. */
async function halfWritten(databaseUrl: string, perEvent: number): Promise<string[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ problem: string }>(
      `select 'event ' || e.id || ' has ' || count(d.id) || ' deliveries' as problem
         from hookline.events e
         left join hookline.deliveries d on d.tenant_id = e.tenant_id and d.event_id = e.id
        group by e.tenant_id, e.id having count(d.id) <> $1
       union all
       select 'delivery ' || d.id || ' has no event'
         from hookline.deliveries d
        where not exists (select 1 from hookline.events e where e.tenant_id = d.tenant_id and e.id = d.event_id)`,
      [perEvent],
    );
    return rows.map((row) => row.problem);
  } finally {
    await client.end();
  }
}
