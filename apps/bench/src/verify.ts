import type { Client } from "@connectrpc/connect";
import { type AttemptLogService, DeliveryStatus } from "@hookline/contracts";
import type { EmitClient } from "./emit-load.js";

const clock = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Polls until no delivery of the tenant is pending; resolves to the epoch ms it saw none. Each poll
 * reads the tenant's deliveries up to the first pending one, so it is not made too often.
 */
export async function waitUntilNonePending(
  log: Client<typeof AttemptLogService>,
  tenantId: string,
  pollMs = 25,
): Promise<number> {
  for (;;) {
    const { deliveries } = await log.listDeliveries({
      tenantId,
      status: DeliveryStatus.PENDING,
      pageSize: 1,
    });
    if (deliveries.length === 0) return clock();
    await sleep(pollMs);
  }
}

/** Counts the tenant's deliveries by status, reading every page of 1,000. */
export async function countDeliveries(
  log: Client<typeof AttemptLogService>,
  tenantId: string,
): Promise<{ total: number; byStatus: Map<DeliveryStatus, number>; extraAttempts: number }> {
  const byStatus = new Map<DeliveryStatus, number>();
  let total = 0;
  let extraAttempts = 0;
  let pageToken = "";
  do {
    const page = await log.listDeliveries({ tenantId, pageSize: 1000, pageToken });
    for (const delivery of page.deliveries) {
      total += 1;
      byStatus.set(delivery.status, (byStatus.get(delivery.status) ?? 0) + 1);
      if (delivery.attemptCount > 1) extraAttempts += delivery.attemptCount - 1;
    }
    pageToken = page.nextPageToken;
  } while (pageToken !== "");
  return { total, byStatus, extraAttempts };
}

/**
 * Throws unless all `expected` deliveries of the tenant are delivered (each in one attempt), and
 * the given events each show `perEvent` delivered deliveries through GetEvent.
 */
export async function confirmDelivered(
  clients: { log: Client<typeof AttemptLogService>; emit: Pick<EmitClient, "getEvent"> },
  {
    tenantId,
    expected,
    eventIds,
    perEvent,
  }: { tenantId: string; expected: number; eventIds: string[]; perEvent: number },
): Promise<void> {
  const counted = await countDeliveries(clients.log, tenantId);
  const delivered = counted.byStatus.get(DeliveryStatus.DELIVERED) ?? 0;
  if (counted.total !== expected || delivered !== expected) {
    const statuses = [...counted.byStatus].map(([status, n]) => `${DeliveryStatus[status]}=${n}`).join(" ");
    throw new Error(`expected ${expected} delivered deliveries, found ${counted.total} (${statuses})`);
  }
  if (counted.extraAttempts > 0) {
    throw new Error(
      `${counted.extraAttempts} deliveries needed more than one attempt against a 200 receiver`,
    );
  }
  for (const eventId of eventIds) {
    const { deliveries } = await clients.emit.getEvent({ tenantId, eventId });
    const ok = deliveries.filter((d) => d.status === DeliveryStatus.DELIVERED && d.attemptCount === 1);
    if (deliveries.length !== perEvent || ok.length !== perEvent) {
      throw new Error(`GetEvent ${eventId}: ${ok.length} of ${perEvent} deliveries delivered in one attempt`);
    }
  }
}
