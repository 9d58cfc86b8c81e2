import { emitEvents } from "./emit-load.js";
import { watchMachine } from "./machine-busy.js";
import { log } from "./run-support.js";
import type { ScaleOptions } from "./scale-options.js";
import type { ScaleProcesses } from "./scale-processes.js";
import type { ScaleReceiver } from "./scale-receiver.js";
import { type Timed, timed } from "./timed.js";

export interface HangingResult {
  deliveries: number;
  without: Timed;
  with: Timed;
  /** How busy the whole machine was during each run (100 = one core). */
  machineWithout: number;
  machineWith: number;
}

const WARMUP = 100;

/**
 * K healthy endpoints take N events, once alone and once beside an endpoint that never answers
 * (subscribed to the same events); each run is timed from the first Emit to the last healthy receipt.
 */
export async function measureHanging(
  hookline: ScaleProcesses,
  receiver: ScaleReceiver,
  options: ScaleOptions,
): Promise<HangingResult> {
  const run = async (tenantId: string, hanging: boolean, events: number) => {
    for (let i = 0; i < options.healthy; i++) {
      await hookline.endpoints.createEndpoint({
        tenantId,
        id: `healthy-${i}`,
        url: `${receiver.url(tenantId)}/${i}`,
      });
    }
    if (hanging) {
      await hookline.endpoints.createEndpoint({
        tenantId,
        id: "hanging",
        url: receiver.url(`${tenantId}-x`, "hang"),
      });
    }
    await receiver.reset();
    const started = performance.now();
    const machineBusy = watchMachine();
    const arrived = receiver.waitFor(tenantId, events * options.healthy);
    arrived.catch(() => {});
    await emitEvents(hookline.emit, { tenantId, prefix: "evt", count: events, inFlight: 32 });
    // Longer than other phases: without this figure there is no ratio.
    const took = await timed(arrived, started, 3 * options.phaseTimeoutMs);
    return { took, machine: machineBusy() };
  };
  // The warm-up, on endpoints of its own, lets the JIT and the pools warm before either timed run.
  await run("hang-warm", false, Math.min(WARMUP, options.events));
  const deliveries = options.events * options.healthy;
  log(`${deliveries} deliveries to ${options.healthy} healthy endpoints, alone`);
  const without = await run("hang-off", false, options.events);
  log(`${deliveries} deliveries to ${options.healthy} healthy endpoints, beside one that never answers`);
  const withHanging = await run("hang-on", true, options.events);
  await receiver.reset(); // drops the hanging endpoint's connections
  return {
    deliveries,
    without: without.took,
    with: withHanging.took,
    machineWithout: without.machine,
    machineWith: withHanging.machine,
  };
}
