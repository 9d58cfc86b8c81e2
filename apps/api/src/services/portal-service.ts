import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import { type PortalService, SessionKind } from "@hookline/contracts";
import { getEndpoint } from "@hookline/store";
import { principalKey, tenantFor } from "../auth.js";
import type { ApiDeps } from "../deps.js";
import { signPortalToken } from "../portal-token.js";
import { durationMs, InvalidArgumentError, optionalId, requireId } from "../validate.js";

const DEFAULT_TTL_MS = 3_600_000;
const MAX_TTL_MS = 7 * 24 * 3_600_000;

const SESSION_KIND = { open: SessionKind.OPEN, token: SessionKind.API_TOKEN, portal: SessionKind.PORTAL };

export function portalService(deps: ApiDeps): ServiceImpl<typeof PortalService> {
  return {
    async createPortalLink(req, ctx) {
      // A link must never outlive, or widen, the credentials that made it.
      const principal = ctx.values.get(principalKey);
      if (principal.kind === "portal") {
        throw new ConnectError("a portal link cannot issue portal links", Code.PermissionDenied);
      }
      const tenantId = requireId("tenant_id", tenantFor(ctx, req.tenantId));
      const endpointId = optionalId("endpoint_id", req.endpointId);
      const ttlMs = req.ttl === undefined ? DEFAULT_TTL_MS : durationMs("ttl", req.ttl);
      // Whole seconds at least: the expiry is kept to the second, and a shorter ttl could round
      // down to a link that has expired when it is handed out.
      if (ttlMs < 1000 || ttlMs > MAX_TTL_MS) {
        throw new InvalidArgumentError("ttl", "must be at least 1 second and at most 7 days");
      }
      // NOT_FOUND when absent. The link names this endpoint, not a later one that takes its id.
      const endpoint = endpointId === "" ? undefined : await getEndpoint(deps.db, tenantId, endpointId);
      // Whole seconds, as the link carries it: the time answered is the time it stops working.
      const expiresAt = new Date(Math.floor((deps.now().getTime() + ttlMs) / 1000) * 1000);
      const token = signPortalToken(deps.portalKey, {
        tenantId,
        endpointId,
        ...(endpoint && { endpointCreatedAt: endpoint.createdAt }),
        ...(principal.issuer && { issuer: principal.issuer }),
        expiresAt,
      });
      return { token, path: `/ui/#portal=${token}`, expiresAt: timestampFromDate(expiresAt) };
    },

    async getSession(_req, ctx) {
      const principal = ctx.values.get(principalKey);
      return {
        kind: SESSION_KIND[principal.kind],
        tenantId: principal.tenantId ?? "",
        endpointId: principal.endpointId ?? "",
        ...(principal.expiresAt && { expiresAt: timestampFromDate(principal.expiresAt) }),
      };
    },
  };
}
