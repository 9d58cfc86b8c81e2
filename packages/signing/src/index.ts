export { type EnvelopeSource, webhookEnvelope } from "./envelope.js";
export { webhookHeaders } from "./headers.js";
export { generateSecret, InvalidSecretError, parseSecret } from "./secret.js";
export { signPayload } from "./sign.js";
