import { createHmac, timingSafeEqual } from "node:crypto";
import { PORTAL_TOKEN_PREFIX } from "@hookline/config";

/** What a portal token grants: one tenant, optionally one of its endpoints, until it expires. */
export interface PortalGrant {
  tenantId: string;
  /** Empty: every endpoint of the tenant. */
  endpointId: string;
  /**
   * For an endpoint-scoped link, when its endpoint was created: it names that endpoint, not a later
   * one that took the same id after a delete. Absent on links issued before it was carried.
   */
  endpointCreatedAt?: Date;
  /**
   * The API token that minted the link, as a keyed digest (issuerOf): the link stops working when
   * that token is no longer configured as it was. Absent on links minted without a token (no tokens
   * configured) and on links issued before it was carried.
   */
  issuer?: string;
  expiresAt: Date;
}

/** Why a presented portal token was refused; the message is safe to show the holder. */
export class PortalTokenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PortalTokenError";
  }
}

// "hlp1." + base64url(JSON claims) + "." + base64url(HMAC-SHA256 over "hlp1." + claims part).

/** True when a bearer token looks like a portal token (it is then verified, never compared to API tokens). */
export function isPortalToken(token: string): boolean {
  return token.startsWith(PORTAL_TOKEN_PREFIX);
}

/** Signs a grant. The token holds only the grant and its signature, no secret of any kind. */
export function signPortalToken(key: Buffer, grant: PortalGrant): string {
  const claims = {
    t: grant.tenantId,
    e: grant.endpointId,
    ...(grant.endpointCreatedAt && { c: grant.endpointCreatedAt.getTime() }),
    ...(grant.issuer && { i: grant.issuer }),
    x: Math.floor(grant.expiresAt.getTime() / 1000),
  };
  const body = PORTAL_TOKEN_PREFIX + Buffer.from(JSON.stringify(claims)).toString("base64url");
  return `${body}.${mac(key, body).toString("base64url")}`;
}

/** Verifies a token's signature, then its expiry; throws PortalTokenError saying which failed. */
export function verifyPortalToken(key: Buffer, token: string, now: Date): PortalGrant {
  const dot = token.lastIndexOf(".");
  const body = token.slice(0, dot);
  // Compared as canonical text, so no other spelling of the same bytes is accepted.
  const presented = Buffer.from(token.slice(dot + 1));
  const expected = Buffer.from(mac(key, body).toString("base64url"));
  if (
    dot <= PORTAL_TOKEN_PREFIX.length ||
    presented.length !== expected.length ||
    !timingSafeEqual(presented, expected)
  ) {
    throw new PortalTokenError("this portal link is not valid (it was altered, or issued by another server)");
  }
  let claims: { t?: unknown; e?: unknown; c?: unknown; i?: unknown; x?: unknown };
  try {
    claims = JSON.parse(Buffer.from(body.slice(PORTAL_TOKEN_PREFIX.length), "base64url").toString("utf8"));
  } catch {
    throw new PortalTokenError("this portal link is not valid");
  }
  if (
    typeof claims.t !== "string" ||
    typeof claims.e !== "string" ||
    typeof claims.x !== "number" ||
    (claims.c !== undefined && typeof claims.c !== "number") ||
    (claims.i !== undefined && typeof claims.i !== "string")
  ) {
    throw new PortalTokenError("this portal link is not valid");
  }
  const expiresAt = new Date(claims.x * 1000);
  if (expiresAt.getTime() <= now.getTime()) {
    throw new PortalTokenError(linkExpiredMessage(expiresAt));
  }
  return {
    tenantId: claims.t,
    endpointId: claims.e,
    ...(typeof claims.c === "number" && { endpointCreatedAt: new Date(claims.c) }),
    ...(typeof claims.i === "string" && { issuer: claims.i }),
    expiresAt,
  };
}

/**
 * How a link names the API token that minted it, with the tenant that token is limited to: a
 * token taken out of the configuration, or narrowed to another tenant, no longer matches. An HMAC
 * under the portal key, so the link (whose claims its holder can read) gives no way to test
 * guesses at the token, and a new portal key makes new names.
 */
export function issuerOf(key: Buffer, minter: { token: string; tenantId?: string | undefined }): string {
  const scope = JSON.stringify([minter.token, minter.tenantId ?? null]);
  return mac(key, `issuer:${scope}`).subarray(0, 16).toString("base64url");
}

/** What a caller is told once its link has expired, on a new call or on a stream it had open. */
export function linkExpiredMessage(expiresAt: Date): string {
  return `this portal link expired at ${expiresAt.toISOString()}; ask for a new one`;
}

function mac(key: Buffer, body: string): Buffer {
  return createHmac("sha256", key).update(body).digest();
}
