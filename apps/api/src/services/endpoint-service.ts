import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import { type EndpointService, EndpointStatus } from "@hookline/contracts";
import { parseSecret } from "@hookline/signing";
import {
  createEndpoint,
  deleteEndpoint,
  getEndpoint,
  listEndpoints,
  newId,
  updateEndpoint,
} from "@hookline/store";
import { endpointMessage } from "../convert.js";
import type { ApiDeps } from "../deps.js";
import {
  description,
  eventTypeList,
  InvalidArgumentError,
  optionalId,
  pageSize,
  requireId,
  requireUrl,
} from "../validate.js";

export function endpointService(deps: ApiDeps): ServiceImpl<typeof EndpointService> {
  return {
    async createEndpoint(req) {
      const tenantId = requireId("tenant_id", req.tenantId);
      const id = optionalId("id", req.id) || newId("ep");
      const url = requireUrl("url", req.url);
      const secret = req.secret === "" ? deps.generateSecret() : req.secret;
      parseSecret(secret);
      const record = await createEndpoint(
        deps.db,
        {
          tenantId,
          id,
          url,
          description: description("description", req.description),
          eventTypes: eventTypeList("event_types", req.eventTypes),
          secret,
        },
        deps.now(),
      );
      deps.onEndpointsChanged?.();
      return { endpoint: endpointMessage(record, true) };
    },

    async getEndpoint(req) {
      const record = await getEndpoint(
        deps.db,
        requireId("tenant_id", req.tenantId),
        requireId("id", req.id),
      );
      return { endpoint: endpointMessage(record, true) };
    },

    async listEndpoints(req) {
      const page = await listEndpoints(
        deps.db,
        requireId("tenant_id", req.tenantId),
        pageSize("page_size", req.pageSize),
        req.pageToken,
      );
      return {
        endpoints: page.items.map((e) => endpointMessage(e, false)),
        nextPageToken: page.nextPageToken,
      };
    },

    async updateEndpoint(req) {
      const tenantId = requireId("tenant_id", req.tenantId);
      const id = requireId("id", req.id);
      if (
        req.status !== undefined &&
        req.status !== EndpointStatus.ENABLED &&
        req.status !== EndpointStatus.DISABLED
      ) {
        throw new InvalidArgumentError(
          "status",
          "must be ENDPOINT_STATUS_ENABLED or ENDPOINT_STATUS_DISABLED",
        );
      }
      const record = await updateEndpoint(
        deps.db,
        tenantId,
        id,
        {
          ...(req.url !== undefined && { url: requireUrl("url", req.url) }),
          ...(req.description !== undefined && { description: description("description", req.description) }),
          ...(req.replaceEventTypes && { eventTypes: eventTypeList("event_types", req.eventTypes) }),
          ...(req.status !== undefined && {
            status: req.status === EndpointStatus.ENABLED ? "enabled" : "disabled",
          }),
        },
        deps.now(),
      );
      if (record.status === "enabled") deps.onEndpointsChanged?.();
      return { endpoint: endpointMessage(record, true) };
    },

    async deleteEndpoint(req) {
      await deleteEndpoint(deps.db, requireId("tenant_id", req.tenantId), requireId("id", req.id));
      return {};
    },

    async rotateEndpointSecret() {
      throw new ConnectError("RotateEndpointSecret is not available yet", Code.Unimplemented);
    },

    async recoverEndpoint() {
      throw new ConnectError("RecoverEndpoint is not available yet", Code.Unimplemented);
    },
  };
}
