import { limitOf } from "./cli.js";
import type { Context } from "./context.js";
import { ATTEMPT_HEADERS, attemptJson, attemptRow, table } from "./output.js";
import { collect } from "./pages.js";

/** `attempts list`: attempts in id order, every filter optional. */
export async function attemptsListCommand(ctx: Context): Promise<void> {
  const { values } = ctx.invocation;
  const filter = {
    tenantId: values.tenant ?? "",
    endpointId: values.endpoint ?? "",
    eventId: values.event ?? "",
    deliveryId: values.delivery ?? "",
  };
  const { items, more } = await collect(
    async (pageSize, pageToken) => {
      const page = await ctx.client.log.listAttempts({ ...filter, pageSize, pageToken }, ctx.call);
      return { items: page.attempts, nextPageToken: page.nextPageToken };
    },
    limitOf(ctx.invocation, 100),
  );
  if (ctx.json) for (const a of items) ctx.out(`${JSON.stringify(attemptJson(a))}\n`);
  else if (items.length === 0) ctx.err("no attempts match\n");
  else ctx.out(table(ATTEMPT_HEADERS, items.map(attemptRow)));
  if (more) ctx.err(`showing the first ${items.length}; raise --limit for more\n`);
}
