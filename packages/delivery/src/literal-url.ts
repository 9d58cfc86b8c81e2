import type { AddressPolicy } from "./address-policy.js";
import { ipFamily } from "./ip-address.js";

/**
 * The IP address a URL names literally, or undefined for a hostname. WHATWG URL parsing has
 * already turned decimal, octal, hex and short IPv4 forms (`2130706433`, `0177.0.0.1`, `0x7f.1`,
 * `127.1`) into dotted quads and compressed IPv6; brackets are dropped here.
 */
export function literalAddress(url: URL): string | undefined {
  const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  return ipFamily(host) === undefined ? undefined : host;
}

/**
 * Why a webhook URL can never be delivered to, as a phrase that follows the field name ("must use
 * http or https"), or undefined when it may be: it must be an absolute http(s) URL without
 * credentials or port 0 whose host, if an IP address, the policy allows. Hostnames are checked when a
 * delivery resolves them.
 */
export function literalUrlProblem(url: string, policy: AddressPolicy): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "is not an absolute URL";
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return "must use http or https";
  if (parsed.username || parsed.password) return "must not carry credentials";
  // Port 0 cannot be connected to; WHATWG keeps it, so it would fail on every attempt.
  if (parsed.port === "0") return "must not use port 0";
  const address = literalAddress(parsed);
  const problem = address === undefined ? undefined : policy.problem(address);
  return problem === undefined ? undefined : `must not point at ${address}, ${problem}`;
}
