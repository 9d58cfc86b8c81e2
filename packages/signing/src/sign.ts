import { createHmac } from "node:crypto";

/**
 * Signs one message with every key, giving the space-separated `webhook-signature` value
 * ("v1,<base64>" per key) so receivers holding either side of a rotated secret can verify it.
 */
export function signPayload(
  keys: readonly Buffer[],
  msgId: string,
  timestampSeconds: number,
  body: string | Buffer,
): string {
  if (keys.length === 0) {
    throw new RangeError("at least one signing key is required");
  }
  if (!Number.isSafeInteger(timestampSeconds)) {
    throw new RangeError("the webhook timestamp must be whole seconds");
  }
  // The body is fed to the HMAC as is: no concatenated copy of a possibly large payload.
  const prefix = `${msgId}.${timestampSeconds}.`;
  let header = "";
  for (const key of keys) {
    const signature = createHmac("sha256", key).update(prefix).update(body).digest("base64");
    header += header === "" ? `v1,${signature}` : ` v1,${signature}`;
  }
  return header;
}
