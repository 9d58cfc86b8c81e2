import type { ServiceImpl } from "@connectrpc/connect";
import type { EmitService } from "@hookline/contracts";
import { getEvent, NotFoundError, newId } from "@hookline/store";
import { endpointFor, linkSees, refuseEndpointScoped, tenantFor } from "../auth.js";
import { deliveryMessage, eventMessage } from "../convert.js";
import type { ApiDeps } from "../deps.js";
import { createEmitBatcher } from "../emit-batcher.js";
import { jsonText, optionalHeaderId, requireEventType, requireId } from "../validate.js";
import { enqueueCommitted } from "./enqueue-committed.js";

export function emitService(deps: ApiDeps): ServiceImpl<typeof EmitService> {
  const emitEvent = deps.emitEvent ?? createEmitBatcher(deps.db, deps.now);
  return {
    async emit(req, ctx) {
      const tenantId = requireId("tenant_id", tenantFor(ctx, req.tenantId));
      refuseEndpointScoped(ctx, "emit events");
      const eventId = optionalHeaderId("event_id", req.eventId) || newId("evt");
      const eventType = requireEventType("event_type", req.eventType);
      const dataJson = jsonText("data_json", req.dataJson, deps.maxDataBytes);
      const result = await emitEvent({ tenantId, id: eventId, eventType, dataJson });
      // After the commit: the store is the truth, the queue a pointer into it. Should this add fail
      // or the process die here, the sweeper finds the pending deliveries and enqueues them.
      // A duplicate adds nothing: its first attempt's job may have ended, and been removed, with
      // the attempt's record still on its way, and a job added then would send it twice. The
      // sweeper, which waits out that gap, heals a first add that was lost.
      if (result.duplicate) {
        return { eventId, deliveryIds: result.deliveries.map((d) => d.id), duplicate: true };
      }
      await enqueueCommitted(
        deps,
        result.deliveries.map((d) => ({
          deliveryId: d.id,
          tenantId: d.tenantId,
          endpointId: d.endpointId,
          attemptNumber: 1,
        })),
        { eventId },
      );
      return { eventId, deliveryIds: result.deliveries.map((d) => d.id), duplicate: false };
    },

    async getEvent(req, ctx) {
      const eventId = requireId("event_id", req.eventId);
      const { event, deliveries } = await getEvent(
        deps.db,
        requireId("tenant_id", tenantFor(ctx, req.tenantId)),
        eventId,
      );
      // A link limited to one endpoint sees the events sent to that endpoint, no others.
      const seen = deliveries.filter((d) => linkSees(ctx, d));
      if (seen.length === 0 && endpointFor(ctx, "") !== "") throw new NotFoundError(`event "${eventId}"`);
      return { event: eventMessage(event), deliveries: seen.map(deliveryMessage) };
    },
  };
}
