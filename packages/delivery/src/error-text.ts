const CONNECT_FAILURES = new Set([
  "ECONNREFUSED",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EADDRNOTAVAIL",
  "ETIMEDOUT",
]);
// getaddrinfo's codes, and the c-ares ones createDnsLookup passes on (a nameserver that timed out,
// failed or refused the query).
const DNS_FAILURES = new Set([
  "ENOTFOUND",
  "EAI_AGAIN",
  "EAI_FAIL",
  "EAI_NODATA",
  "ETIMEOUT",
  "ESERVFAIL",
  "EREFUSED",
]);
const RESETS = new Set(["ECONNRESET", "EPIPE", "ECONNABORTED"]);
const TLS_FAILURE = /^(?:CERT_|ERR_TLS_|ERR_SSL_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|HOSTNAME_MISMATCH)/;
const PARSER_REASON = /\(([^)]*)\)\s*$/;
const TIMEOUTS = new Set(["UND_ERR_CONNECT_TIMEOUT", "UND_ERR_HEADERS_TIMEOUT"]);
// undici reports a CONNECT the egress proxy refused as "Proxy response (403) !== 200 when HTTP Tunneling".
const PROXY_REFUSAL = /^Proxy response \((\d+)\)/;

/** The largest response head accepted (Node's default), named in the error when a receiver exceeds it. */
export const MAX_HEADER_BYTES = 16 * 1024;

/** The customer-facing text for an attempt that got no response; `timeoutMs` names the deadline. */
export function errorText(error: unknown, timeoutMs: number): string {
  const message = error instanceof Error ? error.message : "";
  // undici 7's HTTPParserError has no code: it looks up llhttp's error names by number in a
  // name-to-number table, so it is recognised by name.
  if (error instanceof Error && error.name === "HTTPParserError") {
    return `invalid HTTP response: ${PARSER_REASON.exec(message)?.[1] ?? message}`;
  }
  const refusal = PROXY_REFUSAL.exec(message);
  if (refusal) return `refused by the egress proxy: it answered ${refusal[1]}`;
  const code = codeOf(error);
  if (code === undefined) return error instanceof Error ? `request failed: ${error.name}` : "request failed";
  if (TIMEOUTS.has(code)) return timeoutText(timeoutMs);
  if (CONNECT_FAILURES.has(code)) return `connection failed: ${code}`;
  if (DNS_FAILURES.has(code)) return `DNS lookup failed: ${code}`;
  if (RESETS.has(code)) return `connection reset: ${code}`;
  if (code === "UND_ERR_SOCKET") return `connection closed: ${message}`;
  if (code === "UND_ERR_HEADERS_OVERFLOW")
    return `invalid HTTP response: headers larger than ${MAX_HEADER_BYTES} bytes`;
  if (code === "UND_ERR_RES_CONTENT_LENGTH_MISMATCH") return "invalid HTTP response: body cut short";
  if (TLS_FAILURE.test(code)) return `TLS handshake failed: ${code}`;
  if (code === "UND_ERR_INVALID_ARG") return `invalid request: ${message}`;
  return `request failed: ${code}`;
}

/**
 * True when the receiver never answered in time: undici's own deadlines (connect, response
 * headers), which are the delivery timeout, or the kernel's connect timeout.
 */
export function isTimeout(error: unknown): boolean {
  const code = codeOf(error);
  return code !== undefined && (TIMEOUTS.has(code) || code === "ETIMEDOUT");
}

/** The text of an attempt whose response headers did not arrive in time. */
export function timeoutText(timeoutMs: number): string {
  return `no response within ${timeoutMs} ms`;
}

/**
 * Removes request header values (the signature among them) from a text, in case a lower layer
 * ever quotes one in an error message.
 */
export function redactHeaderValues(text: string, headers: Record<string, string>): string {
  let redacted = text;
  for (const value of Object.values(headers)) {
    if (value.length >= 8 && redacted.includes(value)) redacted = redacted.replaceAll(value, "[redacted]");
  }
  return redacted;
}

/** The error's system or undici code, looked for through its causes. */
export function codeOf(error: unknown): string | undefined {
  // undici wraps some system errors (e.g. connect failures in an AggregateError or a cause chain).
  let current: unknown = error;
  for (let depth = 0; depth < 4 && typeof current === "object" && current !== null; depth++) {
    const { code, cause, errors } = current as { code?: unknown; cause?: unknown; errors?: unknown };
    if (typeof code === "string" && code !== "UND_ERR") return code;
    current = cause ?? (Array.isArray(errors) ? errors[0] : undefined);
  }
  return undefined;
}
