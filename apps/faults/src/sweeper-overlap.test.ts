import assert from "node:assert/strict";
import { test } from "node:test";
import { createHooklineClient } from "@hookline/client";
import { deploy, kind, type OwnServers, servers, startOwnServers } from "./backend.js";
import { spawnWatched, stopWithin } from "./cluster.js";
import { startFaultReceiver } from "./receiver.js";
import { trace } from "./stream.js";

/**
 * A backlog of overdue deliveries makes each sweep slower than the sweep interval. Sweeps that
 * overlapped used to deadlock embedded PGlite: its advisory locks are not exclusive (one
 * session), so each sweep held one of the store's four pooled connections while it waited for
 * another. A sweep now runs one at a time per process, and the process must keep answering.
 */
const EVENTS = 300;

test(`the api keeps answering while sweeps overlap (${kind})`, async () => {
  const own: OwnServers | undefined = servers ? await startOwnServers() : undefined;
  const deployment = await deploy(own, {
    HOOKLINE_SWEEP_INTERVAL: "100ms",
    HOOKLINE_SWEEP_GRACE: "200ms",
    HOOKLINE_ENDPOINT_CONCURRENCY: "1",
  });
  // One slow endpoint: deliveries queue up behind it and become overdue.
  const receiver = await startFaultReceiver(() => ({ kind: "answer", status: 200, delayMs: 1000 }));
  // One process, api and worker, on either backend: the sweeps and the Emit calls share its pool.
  const proc = await spawnWatched("standalone", deployment.env);
  const client = createHooklineClient({ address: deployment.address });
  try {
    await client.endpoints.createEndpoint({ tenantId: "t", id: "slow", url: receiver.url("slow") });
    // Emit calls, eight at a time; the first that gets no answer in 3 s ends them.
    const failures: string[] = [];
    let next = 0;
    const lane = async () => {
      while (next < EVENTS && failures.length === 0) {
        const eventId = `s${next++}`;
        await client.emit
          .emit({ tenantId: "t", eventId, eventType: "x", dataJson: "{}" }, { timeoutMs: 3000 })
          .catch((error: Error) => failures.push(`Emit ${eventId}: ${error.message}`));
      }
    };
    await Promise.all(Array.from({ length: 8 }, lane));
    trace(`sweeper overlap: ${next} Emit calls, ${failures.length} failed`);
    // Then reads for a while: a slow process answers some of them, a deadlocked one none.
    let answered = 0;
    for (let i = 0; i < 5; i++) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      try {
        await client.log.listDeliveries({ tenantId: "t", pageSize: 1 }, { timeoutMs: 3000 });
        answered += 1;
      } catch (error) {
        failures.push(`ListDeliveries: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    assert.deepEqual(failures, [], `the api stopped answering (after ${answered} good reads)`);
  } finally {
    client.close();
    await stopWithin(proc, 5000);
    await receiver.close();
    await deployment.dispose();
    await own?.dispose();
  }
});
