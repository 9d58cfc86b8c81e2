import { type Endpoint, EndpointStatus } from "@hookline/contracts";
import { limitOf, requireTenant } from "./cli.js";
import type { Context } from "./context.js";
import { UsageError } from "./errors.js";
import { ENDPOINT_HEADERS, endpointFields, endpointJson, endpointRow, table } from "./output.js";
import { collect } from "./pages.js";
import { durationOption, timeOption } from "./times.js";

/**
 * `endpoints create|list|get|update|delete|rotate-secret|recover`. Only create, get and
 * rotate-secret show the signing secret.
 */
export async function endpointsCommand(ctx: Context): Promise<void> {
  const { client, invocation, call } = ctx;
  const { values, command } = invocation;
  const tenantId = requireTenant(invocation);
  const id = invocation.args[0] ?? "";
  switch (command) {
    case "endpoints create": {
      if (!values.url) throw new UsageError("endpoints create needs --url", command);
      const { endpoint } = await client.endpoints.createEndpoint(
        {
          tenantId,
          id: values.id ?? "",
          url: values.url,
          description: values.description ?? "",
          eventTypes: values["event-type"] ?? [],
          secret: values.secret ?? "",
          ...limitFields(values, command),
        },
        call,
      );
      return showEndpoint(ctx, endpoint, true);
    }
    case "endpoints get": {
      const { endpoint } = await client.endpoints.getEndpoint({ tenantId, id }, call);
      return showEndpoint(ctx, endpoint, true);
    }
    case "endpoints update": {
      const { endpoint } = await client.endpoints.updateEndpoint(updateRequest(ctx, tenantId, id), call);
      return showEndpoint(ctx, endpoint, false);
    }
    case "endpoints delete": {
      // No deadline: the delete cancels the endpoint's whole backlog before it answers (about
      // 30 s a million), and a deadline would report a failure for a delete that went through.
      await probe(ctx, tenantId);
      await client.endpoints
        .deleteEndpoint({ tenantId, id }, { signal: ctx.signal })
        .catch((error: unknown) => {
          // The api carries a delete it has received through to the end, whoever stops waiting.
          if (ctx.signal.aborted) {
            ctx.err(
              `hookline: interrupted: if the delete reached Hookline it goes on there (the endpoint is removed and its pending deliveries cancelled); hookline endpoints list --tenant ${tenantId}, with the same --address and --token, shows whether it is gone\n`,
            );
          }
          throw error;
        });
      ctx.out(ctx.json ? `${JSON.stringify({ tenantId, id, deleted: true })}\n` : `deleted endpoint ${id}\n`);
      return;
    }
    case "endpoints rotate-secret": {
      const { endpoint } = await client.endpoints.rotateEndpointSecret(
        {
          tenantId,
          id,
          secret: values.secret ?? "",
          ...(values.grace !== undefined && { gracePeriod: durationOption("grace", values.grace, command) }),
        },
        call,
      );
      return showEndpoint(ctx, endpoint, true);
    }
    case "endpoints recover": {
      if (values.since === undefined) throw new UsageError("endpoints recover needs --since", command);
      const since = timeOption("since", values.since, Date.now(), command);
      // No deadline: a large backlog is requeued a page at a time for as long as it takes, and an
      // interrupt (Ctrl-C) stops it between pages; running it again carries on.
      await probe(ctx, tenantId);
      const { requeued } = await client.endpoints
        .recoverEndpoint({ tenantId, id, since }, { signal: ctx.signal })
        .catch((error: unknown) => {
          if (ctx.signal.aborted) {
            ctx.err("hookline: interrupted: what was requeued stays queued; run it again for the rest\n");
          }
          throw error;
        });
      ctx.out(
        ctx.json
          ? `${JSON.stringify({ tenantId, id, requeued })}\n`
          : `requeued ${requeued} failed ${requeued === 1 ? "delivery" : "deliveries"} of endpoint ${id}\n`,
      );
      return;
    }
    case "endpoints list": {
      const { items, more } = await collect(
        async (pageSize, pageToken) => {
          const page = await client.endpoints.listEndpoints({ tenantId, pageSize, pageToken }, call);
          return { items: page.endpoints, nextPageToken: page.nextPageToken };
        },
        limitOf(invocation, 100),
      );
      if (ctx.json) for (const e of items) ctx.out(`${JSON.stringify(endpointJson(e, false))}\n`);
      else if (items.length === 0) ctx.err(`no endpoints for tenant ${tenantId}\n`);
      else ctx.out(table(ENDPOINT_HEADERS, items.map(endpointRow)));
      if (more) ctx.err(`showing the first ${items.length}; raise --limit for more\n`);
      return;
    }
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

/**
 * One small call with the usual deadline before a call that has none, so that an api that is out
 * of reach or not answering (a host that drops packets, a stalled proxy) is reported within the
 * deadline instead of leaving the command waiting forever.
 */
async function probe(ctx: Context, tenantId: string): Promise<void> {
  await ctx.client.endpoints.listEndpoints({ tenantId, pageSize: 1 }, ctx.call);
}

function updateRequest(ctx: Context, tenantId: string, id: string) {
  const { values, command } = ctx.invocation;
  const types = values["event-type"];
  if (values.enable && values.disable)
    throw new UsageError("--enable and --disable exclude each other", command);
  if (types && values["all-event-types"]) {
    throw new UsageError("--event-type and --all-event-types exclude each other", command);
  }
  const status = values.enable
    ? EndpointStatus.ENABLED
    : values.disable
      ? EndpointStatus.DISABLED
      : undefined;
  const replace = types !== undefined || values["all-event-types"] === true;
  const limits = limitFields(values, command ?? "endpoints update");
  if (
    values.url === undefined &&
    values.description === undefined &&
    !replace &&
    status === undefined &&
    Object.keys(limits).length === 0
  ) {
    throw new UsageError("nothing to update: give at least one field to change", command);
  }
  return {
    tenantId,
    id,
    ...(values.url !== undefined && { url: values.url }),
    ...(values.description !== undefined && { description: values.description }),
    ...(status !== undefined && { status }),
    ...limits,
    eventTypes: types ?? [],
    replaceEventTypes: replace,
  };
}

/**
 * --max-in-flight and --rate-limit as request fields. The server checks their ranges, but a
 * max_in_flight that is not a uint32 (1.5, -3) cannot even be encoded into the request.
 */
function limitFields(
  values: { "max-in-flight"?: string | undefined; "rate-limit"?: string | undefined },
  command: string,
): { maxInFlight?: number; rateLimitPerSecond?: number } {
  const rate = values["rate-limit"];
  const rateLimitPerSecond = rate === undefined ? undefined : Number(rate);
  if (rate !== undefined && (rate.trim() === "" || !Number.isFinite(rateLimitPerSecond)))
    throw new UsageError("--rate-limit must be a number", command);
  const max = values["max-in-flight"];
  if (max !== undefined && !/^\d{1,9}$/.test(max.trim()))
    throw new UsageError(
      `--max-in-flight must be a whole number${command === "endpoints update" ? " (0: the service default)" : ""}, not "${max}"`,
      command,
    );
  const maxInFlight = max === undefined ? undefined : Number(max);
  return {
    ...(maxInFlight !== undefined && { maxInFlight }),
    ...(rateLimitPerSecond !== undefined && { rateLimitPerSecond }),
  };
}

function showEndpoint(ctx: Context, endpoint: Endpoint | undefined, withSecret: boolean): void {
  if (!endpoint) throw new Error("the server answered without an endpoint");
  ctx.out(
    ctx.json
      ? `${JSON.stringify(endpointJson(endpoint, withSecret))}\n`
      : endpointFields(endpoint, withSecret),
  );
}
