import { randomBytes } from "node:crypto";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { createHooklineClient, type HooklineClient } from "@hookline/client";
import {
  type Attempt,
  type Delivery,
  DeliveryStatus,
  type Endpoint,
  EndpointStatus,
} from "@hookline/contracts";

export const EVENT_ID = "evt_invoice_1001_paid";
const FINAL_WITHIN_MS = 30_000;

/** What the service reports once every delivery of the demo event is final. */
export interface ServiceOutcome {
  /** Sorted by endpoint, then attempt number. */
  attempts: Attempt[];
  /** Sorted by endpoint. */
  deliveries: Delivery[];
  /** Sorted by id. */
  disabled: Endpoint[];
  secrets: Map<string, string>;
  emittedAtMs: number;
  finalAtMs: number;
}

/**
 * Registers the endpoints for a fresh demo tenant (fresh, so a rerun on the same database starts
 * clean), emits one invoice.paid to all of them and waits, bounded, until every delivery is final.
 */
export async function runScenario(
  address: string,
  urls: ReadonlyMap<string, string>,
): Promise<ServiceOutcome> {
  const client = createHooklineClient({ address });
  try {
    return await scenarioSteps(client, urls);
  } finally {
    client.close();
  }
}

async function scenarioSteps(
  client: HooklineClient,
  urls: ReadonlyMap<string, string>,
): Promise<ServiceOutcome> {
  const { endpoints, emit: emitter, log: attemptLog } = client;
  const tenantId = `demo_${randomBytes(4).toString("hex")}`;

  const secrets = new Map<string, string>();
  for (const [id, url] of urls) {
    const { endpoint } = await endpoints.createEndpoint({ tenantId, id, url, description: `demo ${id}` });
    secrets.set(id, endpoint?.secret ?? "");
  }
  const emittedAtMs = Date.now();
  const emitted = await emitter.emit({
    tenantId,
    eventId: EVENT_ID,
    eventType: "invoice.paid",
    dataJson: JSON.stringify({ invoice: "inv_1001", amount_cents: 4200, currency: "EUR" }),
  });
  if (emitted.deliveryIds.length !== urls.size) {
    throw new Error(`Emit made ${emitted.deliveryIds.length} deliveries, expected ${urls.size}`);
  }

  // No RPC announces a delivery becoming final, so poll GetEvent until none is pending.
  let deliveries: Delivery[] = [];
  for (;;) {
    ({ deliveries } = await emitter.getEvent({ tenantId, eventId: EVENT_ID }));
    if (deliveries.every((d) => d.status !== DeliveryStatus.PENDING)) break;
    if (Date.now() - emittedAtMs > FINAL_WITHIN_MS) {
      const pending = deliveries.filter((d) => d.status === DeliveryStatus.PENDING);
      const which = pending.map((d) => `${d.endpointId} (${d.attemptCount} attempts so far)`).join(", ");
      throw new Error(`deliveries still pending ${FINAL_WITHIN_MS / 1000} s after the emit: ${which}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  const finalAtMs = Date.now();

  const attempts: Attempt[] = [];
  let pageToken = "";
  do {
    const page = await attemptLog.listAttempts({ tenantId, eventId: EVENT_ID, pageToken });
    attempts.push(...page.attempts);
    pageToken = page.nextPageToken;
  } while (pageToken);

  const all: Endpoint[] = [];
  pageToken = "";
  do {
    const page = await endpoints.listEndpoints({ tenantId, pageToken });
    all.push(...page.endpoints);
    pageToken = page.nextPageToken;
  } while (pageToken);

  return {
    attempts: attempts.sort(
      (x, y) => byText(x.endpointId, y.endpointId) || x.attemptNumber - y.attemptNumber,
    ),
    deliveries: deliveries.sort((x, y) => byText(x.endpointId, y.endpointId)),
    disabled: all.filter((e) => e.status === EndpointStatus.DISABLED).sort((x, y) => byText(x.id, y.id)),
    secrets,
    emittedAtMs,
    finalAtMs,
  };
}

/** Milliseconds since the epoch at which an attempt started. */
export function startedAtMs(attempt: Attempt): number {
  return attempt.startedAt ? timestampMs(attempt.startedAt) : Number.NaN;
}

function byText(x: string, y: string): number {
  return x < y ? -1 : x > y ? 1 : 0;
}
