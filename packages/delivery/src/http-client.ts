import { Agent, type Dispatcher, ProxyAgent, request } from "undici";
import { type AddressPolicy, createAddressPolicy } from "./address-policy.js";
import { createDnsLookup } from "./dns-lookup.js";
import { errorText, isTimeout, MAX_HEADER_BYTES, redactHeaderValues, timeoutText } from "./error-text.js";
import { BlockedAddressError, guardedLookup, type LookupAll } from "./guarded-lookup.js";
import { literalAddress } from "./literal-url.js";
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
  /** Monotonic clock in ms for durationMs (default performance.now). */
  now?: () => number;
  /** Which addresses a delivery may connect to (default: public internet only). */
  addressPolicy?: AddressPolicy;
  /** Resolves hostnames to every address (default createDnsLookup within timeoutMs); each one is checked. */
  lookup?: LookupAll;
  /**
   * http://host:port of a proxy that carries every delivery (CONNECT tunnels). The proxy is then
   * trusted to enforce egress: no local DNS lookup or address check is made, since the proxy
   * resolves names itself and what this host's resolver says would not be where it connects.
   */
  egressProxy?: string;
}

const RETRY_AFTER_STATUSES = new Set([429, 503]);

/**
 * How far past the deadline undici's own timeouts are set. They run on a timer that ticks about
 * every 500 ms, so at the deadline they fired up to that much early (a 200 in 600 ms of an 800 ms
 * deadline was a timeout) or late; they are only a backstop now, and the deadline's timer alone
 * ends an attempt.
 */
const BACKSTOP_MS = 1000;

/** Creates an HTTP client owning one keep-alive connection pool; close() releases it. */
export function createHttpClient(options: HttpClientOptions): HttpClient {
  const { timeoutMs, maxResponseBytes } = options;
  const now = options.now ?? (() => performance.now());
  const pool = {
    // No cap per origin: the endpoints' concurrency limits already bound what is in flight. A cap
    // would make endpoints that share a host (many tenants behind one webhook platform) share its
    // connections too, and a request queued for one runs down its deadline before it is sent, so
    // a hung endpoint would time out its neighbours' attempts.
    connections: null,
    headersTimeout: timeoutMs + BACKSTOP_MS,
    bodyTimeout: timeoutMs + BACKSTOP_MS,
    maxHeaderSize: MAX_HEADER_BYTES,
  };
  // Without a proxy every connection is vetted; with one, the proxy decides (see egressProxy).
  let policy: AddressPolicy | undefined;
  let agent: Dispatcher;
  if (options.egressProxy === undefined) {
    policy = options.addressPolicy ?? createAddressPolicy();
    const lookup = guardedLookup(policy, options.lookup ?? createDnsLookup({ deadlineMs: timeoutMs }));
    agent = new Agent({ ...pool, connect: { timeout: timeoutMs + BACKSTOP_MS, lookup } });
  } else {
    agent = new ProxyAgent({ ...pool, uri: options.egressProxy });
  }

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
    // The socket connects to a literal address without any lookup, so it is checked here.
    const address = literalAddress(target);
    const problem = address === undefined ? undefined : policy?.problem(address);
    if (problem !== undefined) {
      return {
        kind: "error",
        error: `blocked: ${address} is ${problem}`,
        blocked: true,
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
      const sent = request(target, {
        dispatcher: agent,
        method: "POST",
        // A copy: undici's ProxyAgent writes a host header into the object it is given.
        headers: { ...headers },
        body,
        signal: controller.signal,
      });
      const response = await untilAborted(sent, controller.signal);
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
      const blocked = blockedCause(error);
      if (blocked) return { kind: "error", error: blocked.message, blocked: true, durationMs: elapsed() };
      if (timedOut) {
        // Timers can fire a fraction of a millisecond early against performance.now; the attempt
        // did last the whole deadline.
        return {
          kind: "error",
          error: timeoutText(timeoutMs),
          timedOut: true,
          durationMs: Math.max(elapsed(), timeoutMs),
        };
      }
      return {
        kind: "error",
        error: redactHeaderValues(errorText(error, timeoutMs), headers),
        ...(isTimeout(error) && { timedOut: true as const }),
        durationMs: elapsed(),
      };
    } finally {
      clearTimeout(timer);
    }
  }

  return { post, close: () => agent.close() };
}

/**
 * The response, or the signal's abort, whichever comes first: undici does not act on an abort
 * while it connects or shakes hands (a server that never speaks TLS held an attempt 0.5 s past
 * its deadline). A response that comes after the abort is let go.
 */
function untilAborted<T extends { body: { destroy(): void } }>(
  sent: Promise<T>,
  signal: AbortSignal,
): Promise<T> {
  const aborted = new Promise<never>((_resolve, reject) => {
    signal.addEventListener("abort", () => reject(signal.reason), { once: true });
  });
  aborted.catch(() => {}); // an abort after the response is read is nobody's error
  return Promise.race([sent, aborted]).catch((error: unknown) => {
    if (signal.aborted)
      sent.then(
        (late) => late.body.destroy(),
        () => {},
      );
    throw error;
  });
}

function blockedCause(error: unknown): BlockedAddressError | undefined {
  let current = error;
  for (let depth = 0; depth < 4 && current instanceof Error; depth++) {
    if (current instanceof BlockedAddressError) return current;
    current = current.cause;
  }
  return undefined;
}
