import { createHash } from "node:crypto";

/** A job carries ids only: the delivery and which attempt it is for. */
export interface DeliveryJobData {
  deliveryId: string;
  attemptNumber: number;
  /** Set for an attempt an operator asked for: it is made once, with no retries after it. */
  manual?: boolean;
}

/**
 * The queue an endpoint's deliveries go to: its own queue ("ep-...") by default, or one of N
 * shared lanes. Hashing keeps names free of ':' whatever the tenant and endpoint ids hold.
 */
export function queueNameFor(tenantId: string, endpointId: string, lanes: number): string {
  const digest = createHash("sha256")
    .update(`${Buffer.byteLength(tenantId)}:${tenantId}${endpointId}`)
    .digest();
  if (lanes > 0) return `hookline-lane-${digest.readUInt32BE(0) % lanes}`;
  return `hookline-ep-${digest.subarray(0, 16).toString("base64url")}`;
}

/** The first attempt's job id is the delivery id; later attempts get their own ids, so a retry is a new job. */
export function jobIdFor(deliveryId: string, attemptNumber: number): string {
  return attemptNumber <= 1 ? deliveryId : `${deliveryId}.${attemptNumber}`;
}
