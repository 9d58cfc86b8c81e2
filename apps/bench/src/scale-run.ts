import { createTestBackend, type TestSettings } from "@hookline/testkit";
import { type BacklogResult, measureBacklog } from "./backlog.js";
import { type FanOutResult, measureFanOut } from "./fan-out.js";
import { type HangingResult, measureHanging } from "./hanging.js";
import { type IdleResult, measureIdle } from "./idle.js";
import type { BackendKind } from "./options.js";
import { measureRateLimit, type RateLimitResult, rateLimitMissing } from "./rate-limit.js";
import { BENCH_ENV, log } from "./run-support.js";
import type { ScaleOptions, Section } from "./scale-options.js";
import { type ScaleProcesses, startScaleProcesses } from "./scale-processes.js";
import type { ScaleReceiver } from "./scale-receiver.js";

/** What one backend's sections measured; a section that failed has its error instead. */
export interface ScaleBackendResult {
  backend: BackendKind;
  idle?: IdleResult;
  hanging?: HangingResult;
  rate?: RateLimitResult;
  backlog?: BacklogResult;
  fanout?: FanOutResult;
  failures: string[];
}

/** Per-tenant endpoint quota for the run: the fan-out puts every endpoint in one tenant. */
const MAX_ENDPOINTS_PER_TENANT = "20000";

type Measure<T> = (hookline: ScaleProcesses, receiver: ScaleReceiver, options: ScaleOptions) => Promise<T>;

/**
 * Runs the chosen sections on one backend, each on a fresh database and queue prefix (dropped
 * afterwards) with freshly started Hookline processes, so what one section leaves behind (endpoints
 * it had no time to delete, workers of deleted endpoints, a backlog) weighs on no other.
 */
export async function runScaleBackend(
  settings: TestSettings,
  kind: BackendKind,
  options: ScaleOptions,
  receiver: ScaleReceiver,
): Promise<ScaleBackendResult> {
  const result: ScaleBackendResult = { backend: kind, failures: [] };
  const section = async <T>(name: Section, measure: Measure<T>): Promise<T | undefined> => {
    if (!options.sections.includes(name)) return undefined;
    log(`${kind} ${name}:`);
    let hookline: ScaleProcesses | undefined;
    const backend = await createTestBackend(settings, kind);
    try {
      const env = {
        ...backend.env,
        HOOKLINE_API_ADDR: "127.0.0.1:0",
        ...BENCH_ENV,
        HOOKLINE_MAX_ENDPOINTS_PER_TENANT: MAX_ENDPOINTS_PER_TENANT,
      };
      hookline = await startScaleProcesses(kind, env);
      return await measure(hookline, receiver, options);
    } catch (error) {
      result.failures.push(`${name}: ${(error as Error).message}`);
      log(`${name} failed: ${(error as Error).message}`);
      await hookline?.saveLogs();
      return undefined;
    } finally {
      await receiver.reset(); // lets go of hanging requests before the processes stop
      await hookline?.stop();
      await backend.dispose();
    }
  };
  result.idle = await section("idle", measureIdle);
  result.hanging = await section("hanging", measureHanging);
  const missing = rateLimitMissing();
  if (missing && options.sections.includes("rate")) result.rate = { available: false, why: missing };
  else result.rate = await section("rate", measureRateLimit);
  result.backlog = await section("backlog", measureBacklog);
  result.fanout = await section("fanout", measureFanOut);
  return result;
}
