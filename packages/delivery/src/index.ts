export {
  createHttpClient,
  type HttpClient,
  type HttpClientOptions,
  type PostRequest,
} from "./http-client.js";
export { type AttemptOutcome, type Verdict, verdictOf } from "./outcome.js";
export { type RetryPolicy, retryDelayMs } from "./retry-policy.js";
