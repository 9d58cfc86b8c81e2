import type { IncomingHttpHeaders } from "node:http";
import { Code, ConnectError } from "@connectrpc/connect";

/** A loopback name or address: localhost, 127.0.0.0/8 written as an address, ::1. */
export function isLoopback(host: string): boolean {
  const name = host.toLowerCase();
  return name === "localhost" || name === "::1" || /^127(\.\d{1,3}){3}$/.test(name);
}

/**
 * Without tokens, the api answers only calls addressed to a loopback name. A web page the user
 * visits can rebind its own name to 127.0.0.1 (DNS rebinding) and is then same-origin with the
 * api to the browser: it could create endpoints, emit, and read their signing secrets. Its calls
 * still name its own host (Host, or :authority on HTTP/2), which is what is checked here. A call
 * that names no host (HTTP/1.0) cannot come from a browser and is let through.
 */
export function refuseForeignHost(headers: IncomingHttpHeaders): void {
  const named = headers[":authority"] ?? headers.host;
  const authority = Array.isArray(named) ? named[0] : named;
  if (authority === undefined || authority === "" || isLoopback(hostOf(authority))) return;
  throw new ConnectError(
    `without HOOKLINE_API_TOKENS this api answers only calls addressed to localhost, 127.0.0.1 or [::1], not to "${authority.slice(0, 100)}"`,
    Code.PermissionDenied,
  );
}

/** The host of a Host header's value: "[::1]:50051" is ::1, "localhost:50051" is localhost. */
function hostOf(authority: string): string {
  if (authority.startsWith("[")) return authority.slice(1, authority.indexOf("]"));
  const colon = authority.lastIndexOf(":");
  return colon === -1 ? authority : authority.slice(0, colon);
}
