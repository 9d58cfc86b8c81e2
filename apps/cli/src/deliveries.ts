import { toJson } from "@bufbuild/protobuf";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { DeliveryStatus, DescribeDeliveryResponseSchema } from "@hookline/contracts";
import { limitOf, requireTenant } from "./cli.js";
import type { Context } from "./context.js";
import { UsageError } from "./errors.js";
import {
  DELIVERY_LIST_HEADERS,
  deliveryFields,
  deliveryJson,
  deliveryListRow,
  fields,
  requestHeading,
  table,
} from "./output.js";
import { collect } from "./pages.js";
import { timeOption } from "./times.js";

const STATUSES: Record<string, DeliveryStatus> = {
  pending: DeliveryStatus.PENDING,
  delivered: DeliveryStatus.DELIVERED,
  failed: DeliveryStatus.FAILED,
  cancelled: DeliveryStatus.CANCELLED,
};

/** `deliveries list|show|retry`. */
export async function deliveriesCommand(ctx: Context): Promise<void> {
  switch (ctx.invocation.command) {
    case "deliveries list":
      return list(ctx);
    case "deliveries show":
      return show(ctx);
    case "deliveries retry":
      return retry(ctx);
    default:
      throw new UsageError(`unknown command "${ctx.invocation.command}"`);
  }
}

/** Deliveries in creation order, every filter optional. */
async function list(ctx: Context): Promise<void> {
  const { values, command } = ctx.invocation;
  const types = values["event-type"] ?? [];
  if (types.length > 1) throw new UsageError("deliveries list takes one --event-type", command);
  let status = DeliveryStatus.UNSPECIFIED;
  if (values.status !== undefined) {
    const chosen = STATUSES[values.status];
    if (chosen === undefined) {
      throw new UsageError(
        `--status must be one of ${Object.keys(STATUSES).join(", ")}, not "${values.status}"`,
        command,
      );
    }
    status = chosen;
  }
  const now = Date.now();
  const createdFrom =
    values.since === undefined ? undefined : timeOption("since", values.since, now, command);
  const createdUntil =
    values.until === undefined ? undefined : timeOption("until", values.until, now, command);
  // Checked here so the message names the flags (the server's names its fields).
  if (createdFrom && createdUntil && timestampMs(createdUntil) <= timestampMs(createdFrom))
    throw new UsageError("--until must be later than --since", command);
  const filter = {
    tenantId: values.tenant ?? "",
    endpointId: values.endpoint ?? "",
    eventId: values.event ?? "",
    eventType: types[0] ?? "",
    status,
    ...(createdFrom && { createdFrom }),
    ...(createdUntil && { createdUntil }),
  };
  const { items, more } = await collect(
    async (pageSize, pageToken) => {
      const page = await ctx.client.log.listDeliveries({ ...filter, pageSize, pageToken }, ctx.call);
      return { items: page.deliveries, nextPageToken: page.nextPageToken };
    },
    limitOf(ctx.invocation, 100),
  );
  if (ctx.json) for (const d of items) ctx.out(`${JSON.stringify(deliveryJson(d))}\n`);
  else if (items.length === 0) ctx.err("no deliveries match\n");
  else ctx.out(table(DELIVERY_LIST_HEADERS, items.map(deliveryListRow)));
  if (more) ctx.err(`showing the first ${items.length}; raise --limit for more\n`);
}

/** One delivery with the body it sent and, per attempt, the request's headers and signatures. */
async function show(ctx: Context): Promise<void> {
  const tenantId = requireTenant(ctx.invocation);
  const deliveryId = ctx.invocation.args[0] ?? "";
  const described = await ctx.client.log.describeDelivery({ tenantId, deliveryId }, ctx.call);
  if (ctx.json) {
    const json = toJson(DescribeDeliveryResponseSchema, described, { alwaysEmitImplicit: true });
    ctx.out(`${JSON.stringify(json)}\n`);
    return;
  }
  const { delivery, eventType, body, requests } = described;
  if (!delivery) throw new Error("the server answered without a delivery");
  ctx.out(deliveryFields(delivery, eventType));
  ctx.out(`\nbody\n${body}\n`);
  if (requests.length === 0) ctx.out("\nno attempts yet\n");
  for (const request of requests) {
    ctx.out(`\n${requestHeading(request)}\n`);
    const sent = fields([["POST", request.url], ...request.headers.map((h) => [h.name, h.value] as const)]);
    ctx.out(sent.replace(/^(?=.)/gm, "  "));
  }
}

/** One manual attempt now, for a failed, cancelled or delivered delivery. */
async function retry(ctx: Context): Promise<void> {
  const tenantId = requireTenant(ctx.invocation);
  const deliveryId = ctx.invocation.args[0] ?? "";
  const { delivery } = await ctx.client.log.retryDelivery({ tenantId, deliveryId }, ctx.call);
  if (!delivery) throw new Error("the server answered without a delivery");
  ctx.out(
    ctx.json
      ? `${JSON.stringify(deliveryJson(delivery))}\n`
      : `delivery ${delivery.id} is pending again: one manual attempt (attempt ${delivery.attemptCount + 1}) is queued\n`,
  );
}
