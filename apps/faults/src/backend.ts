import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import { rm } from "node:fs/promises";
import { freePort, freshEmbeddedDataDir, readTestSettings } from "@hookline/testkit";
import { reapOnExit } from "./reaper.js";
import { startPostgres, startRedis, type ThrowawayPostgres, type ThrowawayRedis } from "./servers.js";

export const kind = readTestSettings(process.env).kind;
export const servers = kind === "servers";

/** Timings small enough that retries, sweeps and discovery happen within a test run. */
export const FAST_ENV: Record<string, string> = {
  HOOKLINE_RETRY_SCHEDULE: "100ms,200ms,400ms,800ms",
  HOOKLINE_SWEEP_INTERVAL: "500ms",
  HOOKLINE_SWEEP_GRACE: "1s",
  // The product default, adaptive per-endpoint concurrency, with a ceiling the checks can hold it to.
  HOOKLINE_ENDPOINT_CONCURRENCY: "adaptive",
  HOOKLINE_ENDPOINT_MAX_CONCURRENCY: "8",
  HOOKLINE_DISCOVERY_INTERVAL: "200ms",
  HOOKLINE_QUEUE_POLL_INTERVAL: "50ms",
  HOOKLINE_DELIVERY_TIMEOUT_MS: "2000",
  // A killed worker's in-flight attempts run again after about 1.5 times this. Embedded, lock
  // renewals queue behind other work on PGlite's one session: a short lock there lapses on a
  // live, busy process and repeats its attempts.
  HOOKLINE_STALLED_AFTER: servers ? "4s" : "10s",
  HOOKLINE_ALLOWED_CIDRS: "127.0.0.0/8",
};

/**
 * For the scenarios whose receiver misbehaves on purpose: timeouts (each one halves an adaptive
 * limit), fast 503s, and an endpoint with a standing backlog. There the adaptive limit sits below
 * 8 for long stretches: each worker process learns from its own half of the answers, and on two
 * shared cores an answer's latency, measured by the worker, rises with the whole cluster's load,
 * which reads as queueing. Seen with the adaptive default: 27 s latencies against 12 s at a fixed 8
 * for receiver cuts, 41 to 85 s against 14 s to recover from a Redis restart. Those scenarios test
 * the ledger; how the limit reacts to failing and slow receivers has its own tests
 * (apps/standalone/src/adaptive-concurrency.test.ts, packages/queue/src/adaptive-limit.test.ts).
 */
export const FIXED_CONCURRENCY: Record<string, string> = { HOOKLINE_ENDPOINT_CONCURRENCY: "8" };

/**
 * The most requests one endpoint may have in flight across all workers under these settings: a
 * fixed HOOKLINE_ENDPOINT_CONCURRENCY, or the adaptive limit's ceiling.
 */
export function endpointCap(env: Readonly<Record<string, string | undefined>>): number {
  const fixed = Number(env.HOOKLINE_ENDPOINT_CONCURRENCY);
  return Number.isInteger(fixed) && fixed > 0 ? fixed : Number(env.HOOKLINE_ENDPOINT_MAX_CONCURRENCY ?? 50);
}

/** Our own PostgreSQL and Redis, which the test may crash; never the machine's shared servers. */
export interface OwnServers {
  postgres: ThrowawayPostgres;
  redis: ThrowawayRedis;
  dispose(): Promise<void>;
}

export async function startOwnServers(): Promise<OwnServers> {
  const postgres = await startPostgres();
  try {
    const redis = await startRedis();
    return {
      postgres,
      redis,
      async dispose() {
        await redis.dispose();
        await postgres.dispose();
      },
    };
  } catch (error) {
    await postgres.dispose();
    throw error;
  }
}

/** Where one Hookline deployment keeps its data, and the environment its processes get. */
export interface Deployment {
  env: Record<string, string>;
  /** The api's address: a fixed port, so a restarted api is found where the last one was. */
  address: string;
  databaseUrl: string | undefined;
  dispose(): Promise<void>;
}

/** A deployment on our servers (a database and a queue prefix of its own) or, embedded, a data dir. */
export async function deploy(
  own: OwnServers | undefined,
  extra: Record<string, string> = {},
): Promise<Deployment> {
  const id = randomBytes(4).toString("hex");
  const address = `127.0.0.1:${await freePort()}`;
  const common = { ...FAST_ENV, BULLMQ_PREFIX: `f${id}`, HOOKLINE_API_ADDR: address, ...extra };
  if (own) {
    const databaseUrl = await own.postgres.createDatabase(`faults_${id}`);
    return {
      env: { ...common, DATABASE_URL: databaseUrl, REDIS_URL: own.redis.url },
      address,
      databaseUrl,
      dispose: async () => {},
    };
  }
  const dataDir = await freshEmbeddedDataDir("hookline-faults-");
  const unreap = reapOnExit(() => rmSync(dataDir, { recursive: true, force: true }));
  return {
    env: {
      ...common,
      // Sweeps every 5 s, not 500 ms: sweeps that overlap deadlock the embedded store (a product
      // bug that sweeper-overlap.test.ts shows), and every scenario would hang on it.
      HOOKLINE_SWEEP_INTERVAL: "5s",
      ...extra,
      HOOKLINE_DATA_DIR: dataDir,
      // Empty values count as unset: a DATABASE_URL in the test's own environment must not leak in.
      DATABASE_URL: "",
      REDIS_URL: "",
    },
    address,
    databaseUrl: undefined,
    dispose: async () => {
      unreap();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
