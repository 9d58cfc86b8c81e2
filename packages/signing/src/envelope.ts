/** What a webhook body is built from. */
export interface EnvelopeSource {
  eventType: string;
  eventCreatedAt: Date;
  dataJson: string;
}

/**
 * The Standard Webhooks envelope. data_json is spliced in as stored (it was validated as JSON at
 * emit), so the bytes sent are identical on every attempt and to every endpoint.
 */
export function webhookEnvelope(source: EnvelopeSource): string {
  return `{"type":${JSON.stringify(source.eventType)},"timestamp":${JSON.stringify(source.eventCreatedAt.toISOString())},"data":${source.dataJson}}`;
}
