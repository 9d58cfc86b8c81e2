import type { Client } from "@connectrpc/connect";
import type { EmitService } from "@hookline/contracts";
import type { EmitArgs, EmitReply } from "./grpc-emit.js";

/** About 1 KB of event data, the same for every event (the ceiling loop POSTs it too). */
export const DATA_JSON = (() => {
  const base = { invoice_id: "inv_000000000000", amount_cents: 129_900, currency: "EUR", lines: [] };
  const padding = 1024 - JSON.stringify({ ...base, note: "" }).length;
  return JSON.stringify({ ...base, note: "x".repeat(padding) });
})();

/** What the load sections call: Emit, and GetEvent to confirm. */
export type EmitClient = Pick<Client<typeof EmitService>, "getEvent"> & {
  emit(request: EmitArgs): Promise<EmitReply>;
};

export interface EmitLoadResult {
  /** Epoch ms when the first Emit was sent and when the last one was answered. */
  startedAt: number;
  finishedAt: number;
  /** Emit RPC latencies in ms, sorted. */
  latenciesMs: number[];
  deliveries: number;
}

const clock = () => performance.timeOrigin + performance.now();

/** Emits count events named `${prefix}-${i}` with at most inFlight Emit RPCs outstanding. */
export async function emitEvents(
  client: Pick<EmitClient, "emit">,
  {
    tenantId,
    prefix,
    count,
    inFlight,
    eventType = "invoice.paid",
    deadline = Number.POSITIVE_INFINITY,
    onEmitted,
  }: {
    tenantId: string;
    prefix: string;
    count: number;
    inFlight: number;
    eventType?: string;
    /** performance.now() past which no further Emit is sent. */
    deadline?: number;
    /** Called with each answered Emit's delivery count. */
    onEmitted?: (deliveries: number) => void;
  },
): Promise<EmitLoadResult> {
  const latenciesMs: number[] = [];
  let deliveries = 0;
  let next = 0;
  const lane = async () => {
    while (next < count && performance.now() < deadline) {
      const i = next++;
      const sent = performance.now();
      const response = await client.emit({
        tenantId,
        eventId: `${prefix}-${i}`,
        eventType,
        dataJson: DATA_JSON,
      });
      latenciesMs.push(performance.now() - sent);
      deliveries += response.deliveryIds.length;
      onEmitted?.(response.deliveryIds.length);
    }
  };
  const startedAt = clock();
  await Promise.all(Array.from({ length: Math.min(inFlight, count) }, lane));
  const finishedAt = clock();
  latenciesMs.sort((a, b) => a - b);
  return { startedAt, finishedAt, latenciesMs, deliveries };
}

/** The q-th quantile (0..1) of sorted values, nearest rank. */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank] ?? Number.NaN;
}
