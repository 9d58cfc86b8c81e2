import type { Timestamp } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import { type AttemptLogService, DeliveryStatus, NEWEST_ATTEMPT_ID_HEADER } from "@hookline/contracts";
import {
  getDelivery,
  lastAttemptId,
  listAttempts,
  listDeliveries,
  NotFoundError,
  ownEndpointStatus,
  reopenDelivery,
} from "@hookline/store";
import { attemptIdFromStore } from "../attempt-id.js";
import { endpointFor, linkSees, linkSince, tenantFor } from "../auth.js";
import { attemptMessage, deliveryMessage, deliveryStatusValue } from "../convert.js";
import type { ApiDeps } from "../deps.js";
import {
  InvalidArgumentError,
  optionalId,
  pageSize,
  requireEventType,
  requireId,
  timestamp,
} from "../validate.js";
import { watchAttempts } from "../watch-attempts.js";
import { describeDelivery } from "./describe-delivery.js";
import { enqueueCommitted } from "./enqueue-committed.js";

export function attemptLogService(deps: ApiDeps): ServiceImpl<typeof AttemptLogService> {
  return {
    async listDeliveries(req, ctx) {
      const status = req.status === DeliveryStatus.UNSPECIFIED ? undefined : deliveryStatusValue(req.status);
      if (req.status !== DeliveryStatus.UNSPECIFIED && status === undefined) {
        throw new InvalidArgumentError("status", "is not a known DeliveryStatus");
      }
      const page = await listDeliveries(
        deps.db,
        {
          tenantId: optionalId("tenant_id", tenantFor(ctx, req.tenantId)),
          eventId: optionalId("event_id", req.eventId),
          endpointId: optionalId("endpoint_id", endpointFor(ctx, req.endpointId)),
          ...(status && { status }),
          ...(req.eventType !== "" && { eventType: requireEventType("event_type", req.eventType) }),
          ...createdRange(ctx, req.createdFrom, req.createdUntil),
        },
        pageSize("page_size", req.pageSize),
        req.pageToken,
      );
      return { deliveries: page.items.map(deliveryMessage), nextPageToken: page.nextPageToken };
    },

    async listAttempts(req, ctx) {
      const page = await listAttempts(
        deps.db,
        {
          tenantId: optionalId("tenant_id", tenantFor(ctx, req.tenantId)),
          eventId: optionalId("event_id", req.eventId),
          endpointId: optionalId("endpoint_id", endpointFor(ctx, req.endpointId)),
          deliveryId: optionalId("delivery_id", req.deliveryId),
          ...(linkSince(ctx) && { startedFrom: linkSince(ctx) }),
        },
        pageSize("page_size", req.pageSize),
        req.pageToken,
      );
      // Read after the page: every attempt the page could hold is at or below it.
      const newest = attemptIdFromStore(await lastAttemptId(deps.db));
      ctx.responseHeader.set(NEWEST_ATTEMPT_ID_HEADER, newest.toString());
      return { attempts: page.items.map(attemptMessage), nextPageToken: page.nextPageToken };
    },

    watchAttempts: (req, ctx) => watchAttempts(deps, req, ctx),

    describeDelivery: (req, ctx) => describeDelivery(deps, req, ctx),

    async retryDelivery(req, ctx) {
      const tenantId = requireId("tenant_id", tenantFor(ctx, req.tenantId));
      const deliveryId = requireId("delivery_id", req.deliveryId);
      const before = await getDelivery(deps.db, tenantId, deliveryId); // NOT_FOUND when absent
      if (!linkSees(ctx, before)) throw new NotFoundError(`delivery "${deliveryId}"`);
      const now = deps.now();
      const reopened = await reopenDelivery(deps.db, tenantId, deliveryId, now);
      if (!reopened) {
        throw new ConnectError(await whyNotReopened(deps, tenantId, deliveryId), Code.FailedPrecondition);
      }
      await enqueueCommitted(
        deps,
        [
          {
            deliveryId,
            tenantId,
            endpointId: reopened.endpointId,
            attemptNumber: reopened.attemptCount + 1,
            manual: true,
          },
        ],
        { deliveryId },
      );
      // The delivery as this call left it. Read again, it would race the worker: on Redis the
      // manual attempt can be made and recorded before that read (seen in CI: DELIVERED).
      return {
        delivery: deliveryMessage({
          ...before,
          status: "pending",
          attemptCount: reopened.attemptCount,
          nextAttemptAt: now,
        }),
      };
    },
  };
}

/** Why RetryDelivery could not reopen a delivery it found, for FAILED_PRECONDITION. */
async function whyNotReopened(deps: ApiDeps, tenantId: string, deliveryId: string): Promise<string> {
  const current = await getDelivery(deps.db, tenantId, deliveryId); // NOT_FOUND when absent
  if (current.status === "pending")
    return `delivery "${deliveryId}" is pending: its next attempt is already scheduled`;
  // The delivery's own endpoint row: a disabled endpoint that took a deleted one's id is not it.
  if ((await ownEndpointStatus(deps.db, tenantId, deliveryId)) === "disabled") {
    return `endpoint "${current.endpointId}" is disabled: enable it (UpdateEndpoint) before retrying its deliveries`;
  }
  return `delivery "${deliveryId}" was for endpoint "${current.endpointId}", which was deleted: there is nowhere to send it`;
}

/**
 * created_from and created_until as asked, created_from raised for a portal link to its endpoint's
 * creation. A window that ends where it starts, or before, is a caller's mistake (swapped bounds),
 * not a question whose answer is "nothing".
 */
function createdRange(
  ctx: HandlerContext,
  from: Timestamp | undefined,
  until: Timestamp | undefined,
): { createdFrom?: Date; createdUntil?: Date } {
  const asked = from && timestamp("created_from", from);
  const createdUntil = until && timestamp("created_until", until);
  // Compared as sent: Dates keep milliseconds, and a window of a few nanoseconds is a window.
  if (
    from &&
    until &&
    (until.seconds < from.seconds || (until.seconds === from.seconds && until.nanos <= from.nanos))
  ) {
    throw new InvalidArgumentError("created_until", "must be later than created_from");
  }
  const since = linkSince(ctx);
  const createdFrom =
    asked && since ? new Date(Math.max(asked.getTime(), since.getTime())) : (asked ?? since);
  return { ...(createdFrom && { createdFrom }), ...(createdUntil && { createdUntil }) };
}
