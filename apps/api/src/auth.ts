import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import { Code, ConnectError, createContextKey, type HandlerContext } from "@connectrpc/connect";
import { refuseForeignHost } from "./loopback.js";
import {
  isPortalToken,
  issuerOf,
  type PortalGrant,
  PortalTokenError,
  verifyPortalToken,
} from "./portal-token.js";

/** One configured API token: a bare one acts on every tenant, a scoped one on its tenant only. */
export interface ApiToken {
  token: string;
  tenantId?: string;
}

/** Who is calling: undefined tenantId means every tenant (a bare token, or auth turned off). */
export interface Principal {
  kind: "open" | "token" | "portal";
  tenantId: string | undefined;
  /**
   * Which token: a configured one by its position ("token-2"), a portal link by a digest
   * ("link-…"); never the token itself. Undefined without authentication.
   */
  tokenId?: string;
  /** Set for an endpoint-scoped portal token: the only endpoint the call may touch. */
  endpointId?: string;
  /** With endpointId, when that endpoint was created (a later one with its id is another). */
  endpointCreatedAt?: Date;
  /** Set for portal tokens. */
  expiresAt?: Date;
  /** For a configured API token: how the links it mints name it (see PortalGrant.issuer). */
  issuer?: string;
}

export const principalKey = createContextKey<Principal>(
  { kind: "open", tenantId: undefined },
  { description: "caller" },
);

/** How portal tokens are checked: the key that signed them and the clock that expires them. */
export interface PortalVerifier {
  key: Buffer;
  now(): Date;
}

// Health must answer probes that carry no credentials (Kubernetes, load balancers).
const OPEN_SERVICES = new Set(["grpc.health.v1.Health"]);

/** Decides, from the service and the request's headers alone, who is calling. */
export type Authenticator = (service: string, headers: IncomingHttpHeaders) => Principal;

/** What the api accepts of a caller with no token when no tokens are configured. */
export interface OpenAccess {
  /** Calls naming any host, not only a loopback one (HOOKLINE_INSECURE_NO_AUTH; see refuseForeignHost). */
  anyHost: boolean;
}

/**
 * Checks `authorization: Bearer <token>` from the headers alone, so that an unauthenticated caller
 * is refused before its body is read or parsed. API tokens (when configured) are compared as
 * SHA-256 digests in constant time, against every configured token (no early exit), and never
 * logged or echoed. A portal token is honoured, and limits the call, even when no API tokens are
 * configured. Throws UNAUTHENTICATED.
 */
export function createAuthenticator(
  tokens: readonly ApiToken[],
  portal: PortalVerifier,
  open: OpenAccess,
): Authenticator {
  const digests = tokens.map((t, i) => ({
    digest: sha256(t.token),
    tenantId: t.tenantId,
    tokenId: `token-${i + 1}`,
    issuer: issuerOf(portal.key, t),
  }));
  const issuers = new Set(digests.map((d) => d.issuer));
  return (service, headers) => {
    if (OPEN_SERVICES.has(service)) return { kind: "open", tenantId: undefined };
    const match = /^Bearer\s+(\S+)\s*$/i.exec(headers.authorization ?? "");
    if (match?.[1] && isPortalToken(match[1])) {
      let grant: PortalGrant;
      try {
        grant = verifyPortalToken(portal.key, match[1], portal.now());
      } catch (error) {
        if (error instanceof PortalTokenError) throw new ConnectError(error.message, Code.Unauthenticated);
        throw error;
      }
      // Revoking a token (taking it out of HOOKLINE_API_TOKENS, or limiting it to another tenant)
      // revokes the links it minted: a leaked token must not leave its holder a week of access
      // through links made with it.
      if (grant.issuer !== undefined && !issuers.has(grant.issuer)) {
        throw new ConnectError(
          "this portal link was issued with an API token that is no longer accepted; ask for a new one",
          Code.Unauthenticated,
        );
      }
      return {
        kind: "portal",
        tenantId: grant.tenantId,
        // Each link is a token of its own for the per-token stream cap (named by a digest, never itself).
        tokenId: `link-${sha256(match[1]).toString("hex").slice(0, 16)}`,
        ...(grant.endpointId !== "" && { endpointId: grant.endpointId }),
        ...(grant.endpointCreatedAt && { endpointCreatedAt: grant.endpointCreatedAt }),
        expiresAt: grant.expiresAt,
      };
    }
    if (digests.length === 0) {
      if (!open.anyHost) refuseForeignHost(headers);
      return { kind: "open", tenantId: undefined };
    }
    if (!match?.[1])
      throw new ConnectError("missing bearer token (authorization: Bearer <token>)", Code.Unauthenticated);
    const presented = sha256(match[1]);
    let found: (typeof digests)[number] | undefined;
    for (const candidate of digests) {
      if (timingSafeEqual(candidate.digest, presented) && !found) found = candidate;
    }
    if (!found) throw new ConnectError("invalid token", Code.Unauthenticated);
    return { kind: "token", tenantId: found.tenantId, tokenId: found.tokenId, issuer: found.issuer };
  };
}

/**
 * The tenant a call acts on. A scoped token may name only its own tenant (PERMISSION_DENIED
 * otherwise); an empty tenant_id then means "my tenant". Returns "" for "every tenant" (filters).
 */
export function tenantFor(context: HandlerContext, requested: string): string {
  const { tenantId } = context.values.get(principalKey);
  if (tenantId === undefined) return requested;
  if (requested !== "" && requested !== tenantId) {
    throw new ConnectError("this token may act only on its own tenant", Code.PermissionDenied);
  }
  return tenantId;
}

/**
 * The endpoint a call acts on. An endpoint-scoped portal token may name only its endpoint
 * (PERMISSION_DENIED otherwise); an empty endpoint filter then means "my endpoint".
 */
export function endpointFor(context: HandlerContext, requested: string): string {
  const { endpointId } = context.values.get(principalKey);
  if (endpointId === undefined) return requested;
  if (requested !== "" && requested !== endpointId) {
    throw new ConnectError("this link may act only on its own endpoint", Code.PermissionDenied);
  }
  return endpointId;
}

/**
 * Whether a delivery found by its own id (or an event's) is the caller's to see: always, except
 * for an endpoint-scoped portal token and a delivery of another endpoint, or of an earlier endpoint
 * that had its id (made before the link's endpoint was). Callers answer NOT_FOUND then, as for an
 * id that does not exist, so that a link cannot learn which ids exist beyond its endpoint.
 */
export function linkSees(
  context: HandlerContext,
  delivery: { endpointId: string; createdAt: Date },
): boolean {
  const { endpointId } = context.values.get(principalKey);
  if (endpointId === undefined) return true;
  const since = linkSince(context);
  return delivery.endpointId === endpointId && (!since || delivery.createdAt.getTime() >= since.getTime());
}

/**
 * For an endpoint-scoped portal token, when its endpoint was created: its deliveries and attempts
 * from then on are the link's, not those of an earlier endpoint that had the same id.
 */
export function linkSince(context: HandlerContext): Date | undefined {
  return context.values.get(principalKey).endpointCreatedAt;
}

/** Refuses calls an endpoint-scoped portal token may not make (those reaching other endpoints). */
export function refuseEndpointScoped(context: HandlerContext, what: string): void {
  if (context.values.get(principalKey).endpointId !== undefined) {
    throw new ConnectError(`a link limited to one endpoint may not ${what}`, Code.PermissionDenied);
  }
}

function sha256(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}
