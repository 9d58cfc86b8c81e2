import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { getEndpoint, NotFoundError, type StoreDb } from "@hookline/store";
import { principalKey } from "./auth.js";

/**
 * Refuses every call of an endpoint-scoped portal link whose endpoint is gone: deleted, or deleted
 * and replaced by a new endpoint that took its id (another customer's, perhaps, with its own
 * secret). The link names the endpoint by its id and creation time; one read per call, for links
 * only. UNAUTHENTICATED, as for an expired link: the holder needs a new one.
 */
export function linkEndpointInterceptor(db: StoreDb): Interceptor {
  return (next) => async (req) => {
    const { kind, tenantId, endpointId, endpointCreatedAt } = req.contextValues.get(principalKey);
    if (kind === "portal" && tenantId !== undefined && endpointId !== undefined && endpointCreatedAt) {
      const endpoint = await getEndpoint(db, tenantId, endpointId).catch((error: unknown) => {
        if (error instanceof NotFoundError) return undefined;
        throw error;
      });
      if (endpoint?.createdAt.getTime() !== endpointCreatedAt.getTime()) {
        throw new ConnectError(
          `this portal link's endpoint "${endpointId}" was deleted; ask for a new link`,
          Code.Unauthenticated,
        );
      }
    }
    return next(req);
  };
}
