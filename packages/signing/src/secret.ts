import { randomBytes as cryptoRandomBytes } from "node:crypto";

const PREFIX = "whsec_";
const GENERATED_BYTES = 24;
const MIN_BYTES = 24;
const MAX_BYTES = 64;
// Canonical standard base64 (RFC 4648 section 4) with padding; Buffer.from alone would accept anything.
const STANDARD_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Thrown for a malformed signing secret; the message describes the problem, never the secret. */
export class InvalidSecretError extends Error {
  override readonly name = "InvalidSecretError";

  /** reason: what is wrong, as a phrase that follows the secret's name ("must start with ..."). */
  constructor(readonly reason: string) {
    super(`a signing secret ${reason}`);
  }
}

/** Creates a new Standard Webhooks secret: "whsec_" followed by 24 random bytes in base64. */
export function generateSecret(randomBytes: (n: number) => Buffer = cryptoRandomBytes): string {
  return PREFIX + randomBytes(GENERATED_BYTES).toString("base64");
}

/** Decodes a "whsec_..." secret into its HMAC key; throws InvalidSecretError when it is malformed. */
export function parseSecret(secret: string): Buffer {
  if (!secret.startsWith(PREFIX)) {
    throw new InvalidSecretError(`must start with "${PREFIX}"`);
  }
  const encoded = secret.slice(PREFIX.length);
  if (!STANDARD_BASE64.test(encoded)) {
    throw new InvalidSecretError(`must be "${PREFIX}" followed by standard base64`);
  }
  const key = Buffer.from(encoded, "base64");
  if (key.length < MIN_BYTES || key.length > MAX_BYTES) {
    throw new InvalidSecretError(
      `must decode to ${MIN_BYTES} to ${MAX_BYTES} bytes, this one has ${key.length}`,
    );
  }
  return key;
}
