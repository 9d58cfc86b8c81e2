import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { findEndpoint, type StoreDb } from "@hookline/store";
import { type Principal, principalKey } from "./auth.js";

/**
 * Refuses every call of an endpoint-scoped portal link whose endpoint is gone: deleted, or deleted
 * and replaced by a new endpoint that took its id (another customer's, perhaps, with its own
 * secret). One read per call, for such links only.
 */
export function linkEndpointInterceptor(db: StoreDb): Interceptor {
  return (next) => async (req) => {
    await assertLinkEndpoint(db, req.contextValues.get(principalKey));
    return next(req);
  };
}

/**
 * A check for a long-lived call (WatchAttempts): the endpoint may be deleted while the stream is
 * open, and a new endpoint given its id would then feed it. Called with each attempt's start
 * before it is sent: one read covers every attempt that started before that read (a new endpoint's
 * attempts start after it was created, so after the delete), and an attempt that started later
 * is checked again. Undefined for callers that are not endpoint-scoped links.
 */
export function linkEndpointWatch(
  db: StoreDb,
  principal: Principal,
): ((startedAt: Date) => Promise<void>) | undefined {
  if (principal.endpointId === undefined || !principal.endpointCreatedAt) return undefined;
  let confirmedAt = Number.NEGATIVE_INFINITY;
  return async (startedAt) => {
    if (startedAt.getTime() < confirmedAt) return;
    const readAt = Date.now();
    await assertLinkEndpoint(db, principal);
    confirmedAt = readAt;
  };
}

/**
 * The link names its endpoint by id and creation time. UNAUTHENTICATED when that endpoint is gone,
 * as for an expired link: the holder needs a new one. Links issued without the time pass.
 */
async function assertLinkEndpoint(db: StoreDb, principal: Principal): Promise<void> {
  const { kind, tenantId, endpointId, endpointCreatedAt } = principal;
  if (kind !== "portal" || tenantId === undefined || endpointId === undefined || !endpointCreatedAt) return;
  const endpoint = await findEndpoint(db, tenantId, endpointId);
  if (endpoint?.createdAt.getTime() !== endpointCreatedAt.getTime()) {
    throw new ConnectError(
      `this portal link's endpoint "${endpointId}" was deleted; ask for a new link`,
      Code.Unauthenticated,
    );
  }
}
