import { timestampDate } from "@bufbuild/protobuf/wkt";
import { requireTenant } from "./cli.js";
import type { Context } from "./context.js";
import { durationOption } from "./times.js";

/**
 * `portal link`: a console link for one customer (a tenant, optionally one endpoint). The URL is
 * built on the address the CLI called, which is the api's as this machine reaches it: behind a
 * proxy, the path on the public address is what to hand out.
 */
export async function portalLinkCommand(ctx: Context): Promise<void> {
  const { values, command } = ctx.invocation;
  const tenantId = requireTenant(ctx.invocation);
  const link = await ctx.client.portal.createPortalLink(
    {
      tenantId,
      endpointId: values.endpoint ?? "",
      ...(values.ttl !== undefined && { ttl: durationOption("ttl", values.ttl, command) }),
    },
    ctx.call,
  );
  const url = `${ctx.client.baseUrl}${link.path}`;
  const expiresAt = link.expiresAt ? timestampDate(link.expiresAt).toISOString() : "";
  // --json carries the token too, as the RPC does, for a script that sends it some other way.
  const json = { url, token: link.token, path: link.path, expiresAt };
  ctx.out(ctx.json ? `${JSON.stringify(json)}\n` : `${url}\n`);
  if (!ctx.json) ctx.err(`valid until ${expiresAt}\n`);
}
