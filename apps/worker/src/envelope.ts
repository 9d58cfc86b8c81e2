// The envelope lives in @hookline/signing, so the api can show the exact body a delivery sent.
export { webhookEnvelope as envelopeOf } from "@hookline/signing";
