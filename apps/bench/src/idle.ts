import { watchMachine } from "./machine-busy.js";
import { measureWindow, type WindowFigures, waitSettled } from "./proc-resources.js";
import { deleteEndpoints, registerEndpoints } from "./register.js";
import { log } from "./run-support.js";
import type { ScaleOptions } from "./scale-options.js";
import type { ScaleProcesses } from "./scale-processes.js";
import type { ScaleReceiver } from "./scale-receiver.js";

/** One idle window: what each process held, and the conditions it was measured in. */
export interface IdleWindow {
  endpoints: number;
  settled: boolean;
  /** Busy share of the whole machine during the window (100 = one core): others' work shows here. */
  machinePercent: number;
  byProcess: Record<string, WindowFigures>;
}

export interface IdleResult {
  asked: number;
  stoppedBecause: string | undefined;
  loaded: IdleWindow;
  /** After deleting every endpoint; `deleted` may fall short when deleting timed out. */
  deleted: number;
  afterDelete: IdleWindow;
}

/** Registers the endpoints, measures an idle window, deletes them all, measures again. */
export async function measureIdle(
  hookline: ScaleProcesses,
  receiver: ScaleReceiver,
  options: ScaleOptions,
): Promise<IdleResult> {
  const tenants = Array.from({ length: options.tenants }, (_, i) => `idle-${i}`);
  const { endpoints, stoppedBecause } = await registerEndpoints(hookline.endpoints, {
    count: options.endpoints,
    tenants,
    url: (i) => `${receiver.url("idle")}/${i}`,
    guard: { pid: hookline.consumerPid, maxConnections: options.maxConnections, maxFds: options.maxFds },
    timeoutMs: options.phaseTimeoutMs,
  });
  const loaded = await idleWindow(hookline, endpoints.length, options);
  log(`deleting ${endpoints.length} endpoints`);
  const deleted = await deleteEndpoints(hookline.endpoints, endpoints, options.phaseTimeoutMs);
  const afterDelete = await idleWindow(hookline, endpoints.length - deleted, options);
  return { asked: options.endpoints, stoppedBecause, loaded, deleted, afterDelete };
}

async function idleWindow(
  hookline: ScaleProcesses,
  endpoints: number,
  options: ScaleOptions,
): Promise<IdleWindow> {
  const pids = Object.values(hookline.pids);
  const settled = await waitSettled(pids, 5_000, options.settleTimeoutMs);
  log(`${settled ? "settled" : "did not settle"}; measuring ${options.idleSeconds} s with no traffic`);
  const names = Object.keys(hookline.pids);
  const machineBusy = watchMachine();
  const windows = await Promise.all(
    names.map((name) => measureWindow(hookline.pids[name] ?? 0, options.idleSeconds * 1000)),
  );
  return {
    endpoints,
    settled,
    machinePercent: machineBusy(),
    byProcess: Object.fromEntries(names.map((name, i) => [name, windows[i] as WindowFigures])),
  };
}
