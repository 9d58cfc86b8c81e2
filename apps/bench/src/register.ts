import type { Client } from "@connectrpc/connect";
import type { EndpointService } from "@hookline/contracts";
import { readProcess, waitSettled } from "./proc-resources.js";
import { log } from "./run-support.js";

/** An endpoint the bench registered. */
export interface Registered {
  tenantId: string;
  id: string;
}

export interface RegisterResult {
  endpoints: Registered[];
  /** Why fewer than asked were registered; undefined when all were. */
  stoppedBecause: string | undefined;
}

export interface RegisterPlan {
  count: number;
  tenants: string[];
  /** URL of the i-th endpoint. */
  url(i: number): string;
  /** Stop once the consuming process holds this many Redis + PostgreSQL connections or descriptors. */
  guard: { pid: number; maxConnections: number; maxFds: number };
  timeoutMs: number;
}

const IN_FLIGHT = 16;
const PROBE = 100;
const CHECK_EVERY = 250;

/**
 * Registers plan.count endpoints round robin over the tenants. The first 100 are a probe: once the
 * process has settled, what they cost projects what all would, and registration stops short of the
 * guard (the Redis and the machine are shared; today's code holds two Redis clients per endpoint).
 */
export async function registerEndpoints(
  client: Client<typeof EndpointService>,
  plan: RegisterPlan,
): Promise<RegisterResult> {
  const deadline = performance.now() + plan.timeoutMs;
  const endpoints: Registered[] = [];
  const { guard } = plan;
  const overGuard = () => {
    const reading = readProcess(guard.pid);
    const connections = reading.redis + reading.postgres;
    if (connections >= guard.maxConnections) return `the process held ${connections} connections`;
    if (reading.fds >= guard.maxFds) return `the process held ${reading.fds} descriptors`;
    return undefined;
  };
  const createUpTo = async (limit: number) => {
    let next = endpoints.length;
    let stopped: string | undefined;
    const lane = async () => {
      while (next < limit && !stopped) {
        const i = next++;
        const tenantId = plan.tenants[i % plan.tenants.length] ?? "scale";
        const id = `ep-${i}`;
        await client.createEndpoint({ tenantId, id, url: plan.url(i) });
        endpoints.push({ tenantId, id });
        if (endpoints.length % CHECK_EVERY === 0) {
          stopped ??= overGuard();
          if (performance.now() > deadline) stopped ??= `registering took ${plan.timeoutMs / 1000} s`;
        }
      }
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
    return stopped;
  };

  let limit = plan.count;
  // What the process holds before any endpoint: the projection counts only what endpoints add.
  const baseline = readProcess(guard.pid);
  let stoppedBecause = await createUpTo(Math.min(PROBE, plan.count));
  if (!stoppedBecause && plan.count > PROBE) {
    await waitSettled([guard.pid], 3_000, 30_000);
    const probe = readProcess(guard.pid);
    const perEndpoint = {
      connections:
        Math.max(0, probe.redis + probe.postgres - baseline.redis - baseline.postgres) / endpoints.length,
      fds: Math.max(0, probe.fds - baseline.fds) / endpoints.length,
    };
    const affordable = Math.floor(
      Math.min(guard.maxConnections / perEndpoint.connections, guard.maxFds / perEndpoint.fds),
    );
    log(
      `after ${endpoints.length} endpoints: ${probe.redis} Redis + ${probe.postgres} PostgreSQL connections, ${probe.fds} descriptors`,
    );
    if (affordable < plan.count) {
      limit = Math.max(endpoints.length, affordable);
      stoppedBecause =
        `${endpoints.length} endpoints cost ${probe.redis + probe.postgres} connections and ${probe.fds} ` +
        `descriptors; ${plan.count} would pass --max-connections ${guard.maxConnections} or --max-fds ${guard.maxFds}`;
    }
    stoppedBecause = (await createUpTo(limit)) ?? stoppedBecause;
  }
  log(`registered ${endpoints.length} endpoints${stoppedBecause ? ` (stopped: ${stoppedBecause})` : ""}`);
  return { endpoints, stoppedBecause };
}

/** Deletes the endpoints, IN_FLIGHT at a time; resolves to how many were deleted before the timeout. */
export async function deleteEndpoints(
  client: Client<typeof EndpointService>,
  endpoints: Registered[],
  timeoutMs: number,
): Promise<number> {
  const deadline = performance.now() + timeoutMs;
  let next = 0;
  let deleted = 0;
  const lane = async () => {
    while (next < endpoints.length && performance.now() < deadline) {
      const endpoint = endpoints[next++];
      if (!endpoint) continue;
      await client.deleteEndpoint({ tenantId: endpoint.tenantId, id: endpoint.id });
      deleted += 1;
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
  return deleted;
}
