import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import { type EndpointService, EndpointStatus } from "@hookline/contracts";
import { parseSecret } from "@hookline/signing";
import {
  createEndpoint,
  deleteEndpoint,
  findEndpoint,
  getEndpoint,
  InvalidPageTokenError,
  listEndpoints,
  newId,
  rotateEndpointSecret,
  updateEndpoint,
} from "@hookline/store";
import { endpointFor, refuseEndpointScoped, tenantFor } from "../auth.js";
import { endpointMessage } from "../convert.js";
import type { ApiDeps } from "../deps.js";
import {
  description,
  durationMs,
  eventTypeList,
  InvalidArgumentError,
  maxInFlight,
  optionalId,
  pageSize,
  ratePerSecond,
  requireId,
  requireUrl,
  timestamp,
} from "../validate.js";
import { cancelDeletedBacklog, requeueFailed } from "./endpoint-backlog.js";

const DEFAULT_ROTATION_GRACE_MS = 24 * 3_600_000;
const MAX_ROTATION_GRACE_MS = 30 * 24 * 3_600_000;
const MAX_RECOVERY_WINDOW_MS = 14 * 24 * 3_600_000;
const RECOVERY_WINDOW_SLACK_MS = 60_000;

export function endpointService(deps: ApiDeps): ServiceImpl<typeof EndpointService> {
  return {
    async createEndpoint(req, ctx) {
      const tenantId = requireId("tenant_id", tenantFor(ctx, req.tenantId));
      refuseEndpointScoped(ctx, "create endpoints");
      const id = optionalId("id", req.id) || newId("ep");
      const url = requireUrl("url", req.url, deps.addressPolicy);
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
          maxInFlight: maxInFlight("max_in_flight", req.maxInFlight, false) ?? null,
          rateLimitPerSecond: ratePerSecond("rate_limit_per_second", req.rateLimitPerSecond, false) ?? null,
        },
        deps.now(),
        deps.maxEndpointsPerTenant,
      );
      // Only a chosen id can be a deleted endpoint's. A removal that failed halfway left its queue
      // paused; one that went through took the queue's limits with it, and a worker still holding
      // that queue open writes limits only as they change: the new endpoint's are written now.
      if (req.id !== "") {
        const endpoint = { tenantId, endpointId: id };
        await deps.producer
          .unpause(endpoint)
          .then(() =>
            deps.producer.writeLimits(
              endpoint,
              { maxInFlight: record.maxInFlight, ratePerSecond: record.rateLimitPerSecond },
              { backToDefault: true },
            ),
          )
          .catch((error: unknown) => {
            deps.log.warn("could not ready a new endpoint's queue (unpaused, its limits written)", {
              endpointId: id,
              error: error instanceof Error ? error.message : String(error),
            });
          });
      }
      deps.onEndpointsChanged?.();
      return { endpoint: endpointMessage(record, true) };
    },

    async getEndpoint(req, ctx) {
      const record = await getEndpoint(
        deps.db,
        requireId("tenant_id", tenantFor(ctx, req.tenantId)),
        requireId("id", endpointFor(ctx, req.id)),
      );
      const endpoint = endpointMessage(record, true);
      // The queue holds the limit in force (learned, when adaptive); without it the answer stands.
      const current = await deps.producer
        .currentLimit({ tenantId: record.tenantId, endpointId: record.id })
        .catch((error: unknown) => {
          deps.log.warn("could not read an endpoint's current limit from its queue", {
            endpointId: record.id,
            error: error instanceof Error ? error.message : String(error),
          });
          return undefined;
        });
      if (current !== undefined) endpoint.currentMaxInFlight = current;
      return { endpoint };
    },

    async listEndpoints(req, ctx) {
      const tenantId = requireId("tenant_id", tenantFor(ctx, req.tenantId));
      const size = pageSize("page_size", req.pageSize);
      const only = endpointFor(ctx, "");
      if (only !== "") {
        // An endpoint-scoped link's list is its one endpoint, on the first page: filtering the
        // tenant's pages would leave it on whichever page it fell, after pages of nothing.
        // It is never given a page token, so any is one this service did not issue to it.
        if (req.pageToken !== "") throw new InvalidPageTokenError();
        // Its endpoint deleted (a link issued before links carried their endpoint's creation
        // time), the list is empty, as a tenant's with none.
        const record = await findEndpoint(deps.db, tenantId, only);
        return { endpoints: record ? [endpointMessage(record, false)] : [], nextPageToken: "" };
      }
      const page = await listEndpoints(deps.db, tenantId, size, req.pageToken);
      return {
        endpoints: page.items.map((e) => endpointMessage(e, false)),
        nextPageToken: page.nextPageToken,
      };
    },

    async updateEndpoint(req, ctx) {
      const tenantId = requireId("tenant_id", tenantFor(ctx, req.tenantId));
      const id = requireId("id", endpointFor(ctx, req.id));
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
      // Proto3 cannot tell an unset list from an empty one, hence the flag; types sent without it
      // would otherwise be dropped while the call answers as if they were saved.
      if (req.eventTypes.length > 0 && !req.replaceEventTypes) {
        throw new InvalidArgumentError(
          "replace_event_types",
          "must be true when event_types is given (it replaces the endpoint's types; an empty list with it means every type)",
        );
      }
      const limits = {
        maxInFlight: maxInFlight("max_in_flight", req.maxInFlight, true),
        rateLimitPerSecond: ratePerSecond("rate_limit_per_second", req.rateLimitPerSecond, true),
      };
      const url = req.url !== undefined ? requireUrl("url", req.url, deps.addressPolicy) : undefined;
      // Read first: a URL naming another server starts its learned limit over (see below).
      const before = url !== undefined ? await findEndpoint(deps.db, tenantId, id) : undefined;
      const record = await updateEndpoint(
        deps.db,
        tenantId,
        id,
        {
          ...(limits.maxInFlight !== undefined && { maxInFlight: limits.maxInFlight }),
          ...(limits.rateLimitPerSecond !== undefined && { rateLimitPerSecond: limits.rateLimitPerSecond }),
          ...(url !== undefined && { url }),
          ...(req.description !== undefined && { description: description("description", req.description) }),
          ...(req.replaceEventTypes && { eventTypes: eventTypeList("event_types", req.eventTypes) }),
          ...(req.status !== undefined && {
            status: req.status === EndpointStatus.ENABLED ? "enabled" : "disabled",
          }),
        },
        deps.now(),
      );
      // An adaptive limit learned of one server says nothing of another: it starts over, as when
      // max_in_flight is cleared. The workers forget theirs at their next scan.
      const otherServer =
        before !== undefined &&
        record.maxInFlight === null &&
        new URL(before.url).origin !== new URL(record.url).origin;
      if (limits.maxInFlight !== undefined || limits.rateLimitPerSecond !== undefined || otherServer) {
        // Should the queue be away, workers serving it still write them on their next scan.
        await deps.producer
          .writeLimits(
            { tenantId, endpointId: id },
            { maxInFlight: record.maxInFlight, ratePerSecond: record.rateLimitPerSecond },
            { backToDefault: limits.maxInFlight === null || otherServer },
          )
          .catch((error: unknown) =>
            deps.log.warn("could not write an endpoint's new limits into its queue yet", {
              endpointId: id,
              error: error instanceof Error ? error.message : String(error),
            }),
          );
      }
      if (record.status === "enabled") deps.onEndpointsChanged?.();
      return { endpoint: endpointMessage(record, true) };
    },

    async deleteEndpoint(req, ctx) {
      const tenantId = requireId("tenant_id", tenantFor(ctx, req.tenantId));
      const endpointId = requireId("id", endpointFor(ctx, req.id));
      const now = deps.now();
      const deleted = await deleteEndpoint(deps.db, tenantId, endpointId, now);
      await cancelDeletedBacklog(deps, deleted, now);
      return {};
    },

    async rotateEndpointSecret(req, ctx) {
      const tenantId = requireId("tenant_id", tenantFor(ctx, req.tenantId));
      const id = requireId("id", endpointFor(ctx, req.id));
      const secret = req.secret === "" ? deps.generateSecret() : req.secret;
      parseSecret(secret);
      const graceMs =
        req.gracePeriod === undefined
          ? DEFAULT_ROTATION_GRACE_MS
          : durationMs("grace_period", req.gracePeriod);
      // Whole milliseconds hide a nanosecond over the cap: 30 days and 1 ns is over it.
      const overByNanos = graceMs === MAX_ROTATION_GRACE_MS && (req.gracePeriod?.nanos ?? 0) % 1e6 !== 0;
      if (graceMs > MAX_ROTATION_GRACE_MS || overByNanos)
        throw new InvalidArgumentError("grace_period", "must be at most 30 days");
      const record = await rotateEndpointSecret(deps.db, tenantId, id, secret, graceMs, deps.now());
      return { endpoint: endpointMessage(record, true) };
    },

    async recoverEndpoint(req, ctx) {
      const tenantId = requireId("tenant_id", tenantFor(ctx, req.tenantId));
      const id = requireId("id", endpointFor(ctx, req.id));
      if (!req.since) throw new InvalidArgumentError("since", "is required");
      const since = timestamp("since", req.since);
      const now = deps.now();
      // A minute of slack: "since 14 days ago" is reckoned on the caller's clock, then travels.
      if (now.getTime() - since.getTime() > MAX_RECOVERY_WINDOW_MS + RECOVERY_WINDOW_SLACK_MS) {
        throw new InvalidArgumentError("since", "must be within the last 14 days");
      }
      const endpoint = await getEndpoint(deps.db, tenantId, id); // NOT_FOUND when absent
      if (endpoint.status === "disabled") {
        throw new ConnectError(
          `endpoint "${id}" is disabled: enable it (UpdateEndpoint) before recovering its deliveries`,
          Code.FailedPrecondition,
        );
      }
      const requeued = await requeueFailed(deps, { tenantId, endpointId: id, since }, now, ctx.signal);
      return { requeued };
    },
  };
}
