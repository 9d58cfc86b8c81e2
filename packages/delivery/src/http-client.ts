import { Agent, request } from "undici";
import { errorText, redactHeaderValues, timeoutText } from "./error-text.js";
import type { AttemptOutcome } from "./outcome.js";
import { readCapped } from "./read-capped.js";
import { parseRetryAfter } from "./retry-after.js";

/** One webhook POST. */
export interface PostRequest {
  url: string;
  headers: Record<string, string>;
  body: string | Buffer;
}

/** Makes delivery attempts over pooled keep-alive connections. */
export interface HttpClient {
  /** Makes one attempt; never throws for network problems, they become an "error" outcome. */
  post(request: PostRequest): Promise<AttemptOutcome>;
  /** Closes the pooled connections once in-flight attempts finish. */
  close(): Promise<void>;
}

export interface HttpClientOptions {
  /** One deadline for the whole attempt: connect, response headers and body. */
  timeoutMs: number;
  /** How much of a response body is kept; the rest is not read. */
  maxResponseBytes: number;
  /** Pooled connections per origin (default 64). */
  connectionsPerOrigin?: number;
  /** Monotonic clock in ms for durationMs (default performance.now). */
  now?: () => number;
}

const RETRY_AFTER_STATUSES = new Set([429, 503]);

/** Creates an HTTP client owning one keep-alive connection pool; close() releases it. */
export function createHttpClient(options: HttpClientOptions): HttpClient {
  const { timeoutMs, maxResponseBytes } = options;
  const now = options.now ?? (() => performance.now());
  const agent = new Agent({
    connections: options.connectionsPerOrigin ?? 64,
    connect: { timeout: timeoutMs },
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  });

  async function post({ url, headers, body }: PostRequest): Promise<AttemptOutcome> {
    const startedAt = now();
    const elapsed = (): number => Math.round(now() - startedAt);

    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return { kind: "error", error: "invalid URL", durationMs: elapsed() };
    }
    if (target.protocol !== "http:" && target.protocol !== "https:") {
      return {
        kind: "error",
        error: "invalid URL: only http and https are supported",
        durationMs: elapsed(),
      };
    }

    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    try {
      // undici's request() never follows redirects unless a redirect interceptor is composed in.
      const response = await request(target, {
        dispatcher: agent,
        method: "POST",
        headers,
        body,
        signal: controller.signal,
      });
      const text = await readCapped(response.body, maxResponseBytes);
      return {
        kind: "response",
        status: response.statusCode,
        body: text,
        retryAfterMs: RETRY_AFTER_STATUSES.has(response.statusCode)
          ? parseRetryAfter(response.headers["retry-after"], Date.now())
          : undefined,
        durationMs: elapsed(),
      };
    } catch (error: unknown) {
      if (timedOut) {
        // Timers can fire a fraction of a millisecond early against performance.now; the attempt
        // did last the whole deadline.
        return { kind: "error", error: timeoutText(timeoutMs), durationMs: Math.max(elapsed(), timeoutMs) };
      }
      return {
        kind: "error",
        error: redactHeaderValues(errorText(error, timeoutMs), headers),
        durationMs: elapsed(),
      };
    } finally {
      clearTimeout(timer);
    }
  }

  return { post, close: () => agent.close() };
}
