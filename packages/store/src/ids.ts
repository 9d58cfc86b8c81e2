import { createHash, randomBytes } from "node:crypto";

/**
 * The delivery id for (tenant, event, endpoint). Length-prefixing makes the input encoding
 * injective ("order-1"+"customer" never meets "order"+"1-customer"), and SHA-256 keeps the id
 * short, free of ':' (BullMQ refuses it in job ids) and never all digits. Emit computes the same
 * ids in SQL (emit.ts): change both, and emit.test.ts holds them equal.
 */
export function deliveryIdFor(tenantId: string, eventId: string, endpointId: string): string {
  const hash = createHash("sha256");
  for (const part of [tenantId, eventId, endpointId]) {
    hash.update(`${Buffer.byteLength(part)}:`);
    hash.update(part);
  }
  return `dl_${hash.digest("base64url")}`;
}

/** A new time-ordered id with a readable prefix, e.g. "evt_01jq...". */
export function newId(prefix: string, now: number = Date.now()): string {
  const time = now.toString(36).padStart(9, "0");
  return `${prefix}_${time}${randomBytes(10).toString("hex")}`;
}
