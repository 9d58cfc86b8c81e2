import { Code, ConnectError } from "@connectrpc/connect";
import type { HooklineClient } from "@hookline/client";
import { type Attempt, type Delivery, DeliveryStatus } from "@hookline/contracts";
import { until } from "./stream.js";

/** What the store says happened, read through the api. */
export interface Ledger {
  deliveries: Delivery[];
  attempts: Attempt[];
}

// Every call has a deadline: a hung api must fail the test, not stall it.
const CALL = { timeoutMs: 15_000 };

export function ms(timestamp: { seconds: bigint; nanos: number } | undefined): number {
  return timestamp ? Number(timestamp.seconds) * 1000 + Math.floor(timestamp.nanos / 1e6) : 0;
}

/** Every delivery and attempt of a tenant, page by page. */
export async function readLedger(client: HooklineClient, tenantId: string): Promise<Ledger> {
  const deliveries: Delivery[] = [];
  const attempts: Attempt[] = [];
  let token = "";
  for (let page = 0; page < 100; page++) {
    const r = await client.log.listDeliveries({ tenantId, pageSize: 1000, pageToken: token }, CALL);
    deliveries.push(...r.deliveries);
    token = r.nextPageToken;
    if (token === "") break;
  }
  token = "";
  for (let page = 0; page < 100; page++) {
    const r = await client.log.listAttempts({ tenantId, pageSize: 1000, pageToken: token }, CALL);
    attempts.push(...r.attempts);
    token = r.nextPageToken;
    if (token === "") break;
  }
  return { deliveries, attempts };
}

/** Waits until the tenant has `expected` deliveries and none is pending; retries calls that fail. */
export async function waitUntilSettled(
  client: HooklineClient,
  tenantId: string,
  expected: number,
  timeoutMs: number,
): Promise<void> {
  let settled = false;
  let last = "";
  const poll = async () => {
    try {
      const pending = await client.log.listDeliveries(
        { tenantId, status: DeliveryStatus.PENDING, pageSize: 1 },
        CALL,
      );
      if (pending.deliveries.length > 0) {
        last = `still pending, e.g. ${pending.deliveries[0]?.id} (attempts ${pending.deliveries[0]?.attemptCount})`;
        return;
      }
      const { deliveries } = await readLedger(client, tenantId);
      last = `${deliveries.length} of ${expected} deliveries exist`;
      settled = deliveries.length >= expected;
    } catch (error) {
      last = error instanceof Error ? error.message : String(error);
    }
  };
  const deadline = Date.now() + timeoutMs;
  while (!settled && Date.now() < deadline) {
    await poll();
    if (!settled) await new Promise((resolve) => setTimeout(resolve, 500));
  }
  await until(`every delivery to be final (${last})`, () => settled, 0);
}

/**
 * Which events an Emit that failed did commit after all, and when: GetEvent says, through the api.
 */
export async function committedAmong(
  client: HooklineClient,
  tenantId: string,
  eventIds: Iterable<string>,
): Promise<Map<string, number>> {
  const committed = new Map<string, number>();
  for (const eventId of eventIds) {
    try {
      const { event, deliveries } = await client.emit.getEvent({ tenantId, eventId }, CALL);
      if (deliveries.length > 0) committed.set(eventId, ms(event?.createdAt));
    } catch (error) {
      // NOT_FOUND: the Emit never committed, so nothing is owed for it.
      if (!(error instanceof ConnectError && error.code === Code.NotFound)) throw error;
    }
  }
  return committed;
}
