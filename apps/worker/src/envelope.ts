import type { DeliveryWork } from "@hookline/store";

/**
 * The Standard Webhooks envelope. data_json is spliced in as stored (it was validated as JSON at
 * emit), so the bytes sent are identical on every attempt and to every endpoint.
 */
export function envelopeOf(work: Pick<DeliveryWork, "eventType" | "eventCreatedAt" | "dataJson">): string {
  return `{"type":${JSON.stringify(work.eventType)},"timestamp":${JSON.stringify(work.eventCreatedAt.toISOString())},"data":${work.dataJson}}`;
}
