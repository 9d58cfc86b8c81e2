export {
  type AddressPolicy,
  type AddressPolicyOptions,
  type CidrRange,
  createAddressPolicy,
} from "./address-policy.js";
export { createDnsLookup, type DnsLookupOptions } from "./dns-lookup.js";
export { timeoutText } from "./error-text.js";
export type { LookupAll } from "./guarded-lookup.js";
export {
  createHttpClient,
  type HttpClient,
  type HttpClientOptions,
  type PostRequest,
} from "./http-client.js";
export { literalUrlProblem } from "./literal-url.js";
export { type AttemptOutcome, loadSignalOf, type Verdict, verdictOf } from "./outcome.js";
export { type RetryPolicy, retryDelayMs } from "./retry-policy.js";
