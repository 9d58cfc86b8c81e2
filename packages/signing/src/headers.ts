import { signPayload } from "./sign.js";

/** The request headers of one signed Standard Webhooks delivery. */
export function webhookHeaders(
  keys: readonly Buffer[],
  msgId: string,
  timestampSeconds: number,
  body: string | Buffer,
): Record<string, string> {
  return {
    "content-type": "application/json",
    "webhook-id": msgId,
    "webhook-timestamp": String(timestampSeconds),
    "webhook-signature": signPayload(keys, msgId, timestampSeconds, body),
  };
}
