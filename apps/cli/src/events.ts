import { requireTenant } from "./cli.js";
import type { Context } from "./context.js";
import { UsageError } from "./errors.js";
import { DELIVERY_HEADERS, deliveryJson, deliveryRow, eventJson, fields, table, time } from "./output.js";

/** `emit <type> [json]`: the data comes from the argument, or from stdin when it is absent or "-". */
export async function emitCommand(ctx: Context): Promise<void> {
  const { invocation } = ctx;
  const tenantId = requireTenant(invocation);
  const [eventType = "", argument] = invocation.args;
  const data = argument === undefined || argument === "-" ? await ctx.readStdin() : argument;
  // A trailing newline from `echo ... |` is not part of the data.
  const dataJson = data?.trim();
  if (!dataJson) {
    throw new UsageError("emit needs the event's data: pass JSON as an argument or pipe it on stdin", "emit");
  }
  const emitted = await ctx.client.emit.emit(
    { tenantId, eventId: invocation.values.id ?? "", eventType, dataJson },
    ctx.call,
  );
  if (ctx.json) {
    const { eventId, deliveryIds, duplicate } = emitted;
    ctx.out(`${JSON.stringify({ eventId, deliveryIds, duplicate })}\n`);
    return;
  }
  const count = emitted.deliveryIds.length;
  const what =
    count === 0
      ? `no enabled endpoint of tenant ${tenantId} takes ${eventType}`
      : `${count} ${count === 1 ? "delivery" : "deliveries"}`;
  const verb = emitted.duplicate ? "was already recorded (nothing new written)" : "recorded";
  ctx.out(`event ${emitted.eventId} ${verb}: ${what}\n`);
  for (const id of emitted.deliveryIds) ctx.out(`  ${id}\n`);
}

/** `event show <id>`: the event, its data and where each delivery stands. */
export async function eventShowCommand(ctx: Context): Promise<void> {
  const tenantId = requireTenant(ctx.invocation);
  const eventId = ctx.invocation.args[0] ?? "";
  const { event, deliveries } = await ctx.client.emit.getEvent({ tenantId, eventId }, ctx.call);
  if (!event) throw new Error("the server answered without an event");
  if (ctx.json) {
    ctx.out(`${JSON.stringify({ event: eventJson(event), deliveries: deliveries.map(deliveryJson) })}\n`);
    return;
  }
  ctx.out(
    fields([
      ["id", event.id],
      ["tenant", event.tenantId],
      ["type", event.eventType],
      ["created", time(event.createdAt)],
      ["data", event.dataJson],
    ]),
  );
  ctx.out("\n");
  ctx.out(deliveries.length === 0 ? "no deliveries\n" : table(DELIVERY_HEADERS, deliveries.map(deliveryRow)));
}
