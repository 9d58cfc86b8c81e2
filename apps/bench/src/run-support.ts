import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { HooklineApp } from "@hookline/testkit";
import type { BackendKind, BenchOptions } from "./options.js";
import { serverAddresses } from "./reachable.js";
import type { ReceiverHandle } from "./receiver.js";
import { postgresCounters, redisCounters } from "./server-stats.js";

// The pieces of a backend run that are not the run itself: environments, progress, counters.

/** Writes a progress line to stderr. */
export const log = (message: string) => process.stderr.write(`  ${message}\n`);

/** What the bench must change from the product defaults: the receiver is on loopback, which deliveries refuse by default. */
export const BENCH_ENV = { HOOKLINE_ALLOWED_CIDRS: "127.0.0.1/32" };

// The Hookline processes get these variables and nothing else (spawnHookline inherits none), so
// the product defaults apply whatever the calling shell exports.
export function processEnv(
  backendEnv: Record<string, string>,
  options: Pick<BenchOptions, "concurrency" | "env">,
): Record<string, string> {
  const env: Record<string, string> = {};
  Object.assign(env, backendEnv, { HOOKLINE_API_ADDR: "127.0.0.1:0" }, BENCH_ENV);
  if (options.concurrency !== undefined) env.HOOKLINE_ENDPOINT_CONCURRENCY = String(options.concurrency);
  return Object.assign(env, options.env);
}

/**
 * The reference worker's environment: the base Hookline's processes get, minus Hookline's own
 * variables, and nothing inherited either, so a variable the shell exports (NODE_OPTIONS, say)
 * changes neither side. `--env` stays Hookline's: it is for experiments on Hookline.
 */
export function referenceEnv(backendEnv: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(processEnv(backendEnv, { concurrency: undefined, env: {} })).filter(
      ([name]) => !name.startsWith("HOOKLINE_"),
    ),
  );
}

const PRELOAD = fileURLToPath(new URL("./cpu-profile-preload.js", import.meta.url));

export function profileEnv(
  dir: string | undefined,
  kind: BackendKind,
  app: HooklineApp,
): Record<string, string> {
  if (!dir) return {};
  return { NODE_OPTIONS: `--import ${PRELOAD}`, BENCH_CPU_PROFILE_DIR: join(dir, `${kind}-${app}`) };
}

/** Logs every 10 s how many requests the receiver has seen, and the rate over those 10 s. */
export function progressTicker(receiver: ReceiverHandle, expected: number) {
  const started = performance.now();
  let previous = 0;
  const timer = setInterval(() => {
    receiver.count().then(
      ({ count }) => {
        log(`${count}/${expected} requests received (${Math.round((count - previous) / 10)}/s over 10 s)`);
        previous = count;
      },
      () => {},
    );
  }, 10_000);
  timer.unref();
  return {
    elapsedSeconds: () => (performance.now() - started) / 1000,
    stop: () => clearInterval(timer),
  };
}

/** PostgreSQL counters of the run's database and Redis command counters, before and after. */
export function serverCounters(databaseUrl: string) {
  const { redis } = serverAddresses();
  const counters = {
    postgres: () => postgresCounters(databaseUrl),
    redis: () => redisCounters(redis.host, redis.port),
    /**
     * Both at once, with no pause: the run's window starts right after, as the reference's does
     * after its warm-up, and an idle pause for Hookline alone gave it a different start (pools
     * closing idle clients, queues going quiet). PostgreSQL 15 flushes a backend's statistics at
     * most once a second, and one gone idle within that second only 10 s later, so the counters
     * may hold part of the warm-up (at most its few hundred deliveries against N × M); a pause of
     * a second or two did not prevent that either.
     */
    async sample() {
      return { postgres: await counters.postgres(), redis: await counters.redis() };
    },
  };
  return counters;
}
