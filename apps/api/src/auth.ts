import { createHash, timingSafeEqual } from "node:crypto";
import { Code, ConnectError, createContextKey, type HandlerContext } from "@connectrpc/connect";

/** One configured API token: a bare one acts on every tenant, a scoped one on its tenant only. */
export interface ApiToken {
  token: string;
  tenantId?: string;
}

/** Who is calling: undefined tenantId means every tenant (a bare token, or auth turned off). */
export interface Principal {
  tenantId: string | undefined;
  /** Which configured token ("token-2": its position, never the token); undefined without auth. */
  tokenId?: string;
}

export const principalKey = createContextKey<Principal>({ tenantId: undefined }, { description: "caller" });

// Health must answer probes that carry no credentials (Kubernetes, load balancers).
const OPEN_SERVICES = new Set(["grpc.health.v1.Health"]);

/** Decides, from the service and the authorization header alone, who is calling. */
export type Authenticator = (service: string, authorization: string | undefined) => Principal;

/**
 * Checks `authorization: Bearer <token>` when tokens are configured, from the headers alone, so
 * that an unauthenticated caller is refused before its body is read or parsed. Tokens are
 * compared as SHA-256 digests in constant time, against every configured token (no early exit),
 * and never logged or echoed. Throws UNAUTHENTICATED.
 */
export function createAuthenticator(tokens: readonly ApiToken[]): Authenticator {
  const digests = tokens.map((t, i) => ({
    digest: sha256(t.token),
    tenantId: t.tenantId,
    tokenId: `token-${i + 1}`,
  }));
  return (service, authorization) => {
    if (digests.length === 0 || OPEN_SERVICES.has(service)) return { tenantId: undefined };
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? "");
    if (!match?.[1])
      throw new ConnectError("missing bearer token (authorization: Bearer <token>)", Code.Unauthenticated);
    const presented = sha256(match[1]);
    let found: (typeof digests)[number] | undefined;
    for (const candidate of digests) {
      if (timingSafeEqual(candidate.digest, presented) && !found) found = candidate;
    }
    if (!found) throw new ConnectError("invalid token", Code.Unauthenticated);
    return { tenantId: found.tenantId, tokenId: found.tokenId };
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

function sha256(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}
