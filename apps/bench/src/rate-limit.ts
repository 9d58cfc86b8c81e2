import { CreateEndpointRequestSchema, EndpointSchema } from "@hookline/contracts";
import { emitEvents } from "./emit-load.js";
import { log } from "./run-support.js";
import type { ScaleOptions } from "./scale-options.js";
import type { ScaleProcesses } from "./scale-processes.js";
import type { ScaleReceiver } from "./scale-receiver.js";
import { type Timed, timed } from "./timed.js";

export type RateLimitResult =
  | { available: false; why: string }
  | {
      available: true;
      setRate: number;
      received: number;
      took: Timed;
      /** Requests per whole second, counted from the first receipt. */
      observedRate: number;
      /** The same without the first second's worth, which a token bucket may let through at once. */
      steadyRate: number;
    };

const TENANT = "rate";

/** Whether this build's contract has the per-endpoint limit fields (they arrive with issue 10). */
export function rateLimitMissing(): string | undefined {
  const has = (fields: readonly { localName: string }[]) =>
    fields.some((f) => f.localName === "rateLimitPerSecond");
  if (!has(CreateEndpointRequestSchema.fields)) return "CreateEndpointRequest has no rate_limit_per_second";
  if (!has(EndpointSchema.fields)) return "Endpoint has no rate_limit_per_second";
  return undefined;
}

/** One endpoint limited to options.rate per second takes a burst; compares the receive rate with it. */
export async function measureRateLimit(
  hookline: ScaleProcesses,
  receiver: ScaleReceiver,
  options: ScaleOptions,
): Promise<RateLimitResult> {
  const missing = rateLimitMissing();
  if (missing) return { available: false, why: missing };
  // Typed loosely on purpose: the field is read from the schema above, not from this build's types.
  const request = {
    tenantId: TENANT,
    id: "limited",
    url: receiver.url("rate"),
    rateLimitPerSecond: options.rate,
  };
  const { endpoint } = await hookline.endpoints.createEndpoint(request);
  const stored = (endpoint as unknown as { rateLimitPerSecond?: number } | undefined)?.rateLimitPerSecond;
  if (stored !== options.rate) {
    return {
      available: false,
      why: `CreateEndpoint answered rate_limit_per_second ${stored}, not ${options.rate}`,
    };
  }
  await receiver.reset();
  log(`${options.burst} events at once to an endpoint limited to ${options.rate}/s`);
  const started = performance.now();
  const arrived = receiver.waitFor("rate", options.burst);
  arrived.catch(() => {});
  await emitEvents(hookline.emit, { tenantId: TENANT, prefix: "burst", count: options.burst, inFlight: 32 });
  const expectedMs = (1000 * options.burst) / options.rate;
  const took = await timed(arrived, started, Math.min(options.phaseTimeoutMs, 3 * expectedMs + 30_000));
  const times = (await receiver.times("rate")).sort((a, b) => a - b);
  // Deliveries per whole second from a starting receipt: a limit that starts its quota at the top
  // of each second (BullMQ's window) would read one window fast as (n - 1) / (last - first).
  const rateOf = (from: number) => {
    const start = times[from];
    const last = times.at(-1);
    if (start === undefined || last === undefined) return Number.NaN;
    const seconds = Math.floor((last - start) / 1000);
    if (seconds < 1) return Number.NaN;
    return times.filter((t) => t >= start && t < start + seconds * 1000).length / seconds;
  };
  return {
    available: true,
    setRate: options.rate,
    received: times.length,
    took,
    observedRate: rateOf(0),
    steadyRate: rateOf(Math.min(Math.ceil(options.rate), times.length - 2)),
  };
}
