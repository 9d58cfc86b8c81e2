import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import { type AttemptLogService, DeliveryStatus } from "@hookline/contracts";
import { listAttempts, listDeliveries } from "@hookline/store";
import { attemptMessage, deliveryMessage, deliveryStatusValue } from "../convert.js";
import type { ApiDeps } from "../deps.js";
import { InvalidArgumentError, optionalId, pageSize } from "../validate.js";

export function attemptLogService(deps: ApiDeps): ServiceImpl<typeof AttemptLogService> {
  return {
    async listDeliveries(req) {
      const status = req.status === DeliveryStatus.UNSPECIFIED ? undefined : deliveryStatusValue(req.status);
      if (req.status !== DeliveryStatus.UNSPECIFIED && status === undefined) {
        throw new InvalidArgumentError("status", "is not a known DeliveryStatus");
      }
      const page = await listDeliveries(
        deps.db,
        {
          tenantId: optionalId("tenant_id", req.tenantId),
          eventId: optionalId("event_id", req.eventId),
          endpointId: optionalId("endpoint_id", req.endpointId),
          ...(status && { status }),
        },
        pageSize("page_size", req.pageSize),
        req.pageToken,
      );
      return { deliveries: page.items.map(deliveryMessage), nextPageToken: page.nextPageToken };
    },

    async listAttempts(req) {
      const page = await listAttempts(
        deps.db,
        {
          tenantId: optionalId("tenant_id", req.tenantId),
          eventId: optionalId("event_id", req.eventId),
          endpointId: optionalId("endpoint_id", req.endpointId),
          deliveryId: optionalId("delivery_id", req.deliveryId),
        },
        pageSize("page_size", req.pageSize),
        req.pageToken,
      );
      return { attempts: page.items.map(attemptMessage), nextPageToken: page.nextPageToken };
    },

    // biome-ignore lint/correctness/useYield: not served yet; answers UNIMPLEMENTED
    async *watchAttempts() {
      throw new ConnectError("WatchAttempts is not available yet", Code.Unimplemented);
    },

    async retryDelivery() {
      throw new ConnectError("RetryDelivery is not available yet", Code.Unimplemented);
    },
  };
}
