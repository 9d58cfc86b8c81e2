import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type HooklineProcess, spawnHookline } from "@hookline/testkit";
import { removeRedisPrefix } from "./redis-cleanup.js";

/** The running Hookline processes the demo talks to. */
export interface DemoBackend {
  /** Which backend, for stderr only: it differs between runs and must not reach stdout. */
  readonly description: string;
  /** host:port of the api. */
  readonly address: string;
  readonly processes: readonly { name: string; process: HooklineProcess }[];
  /** SIGTERM to every process, then removes what the demo made (once); resolves to the problems seen. */
  stop(): Promise<string[]>;
}

/** The retry waits and timeout the demo's expected outcome is written for. */
export const RETRY_WAITS_MS = [50, 100, 200];
export const TIMEOUT_MS = 300;

/**
 * Starts one `standalone` process on embedded PGlite in a fresh data dir, or, with DATABASE_URL set,
 * an `api` and a `worker` process apart (the scale-out path) under a fresh BULLMQ_PREFIX.
 */
export async function startBackend(env: NodeJS.ProcessEnv): Promise<DemoBackend> {
  const databaseUrl = nonEmpty(env.DATABASE_URL);
  const redisUrl = nonEmpty(env.REDIS_URL);
  // Fresh per run, so queues left by an earlier run on the same Redis are never shared.
  const prefix = `${nonEmpty(env.BULLMQ_PREFIX) ?? "hookline-demo"}-${randomBytes(4).toString("hex")}`;
  const common: Record<string, string> = {
    // The demo's own environment first (DATABASE_URL, REDIS_URL, NODE_EXTRA_CA_CERTS...): the
    // processes it starts run where the user pointed it.
    ...Object.fromEntries(
      Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined),
    ),
    HOOKLINE_RETRY_SCHEDULE: RETRY_WAITS_MS.map((ms) => `${ms}ms`).join(","),
    HOOKLINE_DELIVERY_TIMEOUT_MS: String(TIMEOUT_MS),
    HOOKLINE_API_ADDR: "127.0.0.1:0",
    BULLMQ_PREFIX: prefix,
    // The demo's receivers listen on loopback, which deliveries may reach only when it is allowed.
    HOOKLINE_ALLOWED_CIDRS: "127.0.0.0/8",
  };
  const queue = redisUrl ? `BullMQ on Redis (prefix ${prefix})` : "BullMQ on PostgreSQL";
  const started: { name: string; process: HooklineProcess }[] = [];
  const cleanups: (() => Promise<unknown>)[] = [];
  let stopped: Promise<string[]> | undefined;
  const stop = () => {
    stopped ??= stopAll();
    return stopped;
  };
  const stopAll = async () => {
    const problems: string[] = [];
    // Reverse order: the worker before the api, the api before its data dir goes.
    for (const { name, process } of [...started].reverse()) {
      const code = await process.stop();
      if (code !== 0) problems.push(`${name} exited with code ${code} on SIGTERM`);
    }
    for (const cleanup of cleanups) {
      await cleanup().catch((error: Error) => problems.push(`cleaning up: ${error.message}`));
    }
    return problems;
  };
  try {
    if (redisUrl) cleanups.push(() => removeRedisPrefix(redisUrl, prefix));
    if (!databaseUrl) {
      const dataDir = await mkdtemp(join(tmpdir(), "hookline-demo-"));
      cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
      const standalone = await spawnHookline("standalone", { ...common, HOOKLINE_DATA_DIR: dataDir });
      started.push({ name: "standalone", process: standalone });
      return backend(
        `one standalone process, embedded PGlite in ${dataDir}, ${queue}`,
        standalone,
        started,
        stop,
      );
    }
    // The api first: it migrates the store before a worker opens it.
    const api = await spawnHookline("api", common);
    started.push({ name: "api", process: api });
    started.push({ name: "worker", process: await spawnHookline("worker", common) });
    return backend(
      `an api and a worker process, PostgreSQL at ${redact(databaseUrl)}, ${queue}`,
      api,
      started,
      stop,
    );
  } catch (error) {
    await stop();
    throw error;
  }
}

function backend(
  description: string,
  api: HooklineProcess,
  processes: { name: string; process: HooklineProcess }[],
  stop: () => Promise<string[]>,
): DemoBackend {
  if (!api.address) throw new Error("the api's ready line named no address");
  return { description, address: api.address, processes, stop };
}

function nonEmpty(text: string | undefined): string | undefined {
  return text && text.trim() !== "" ? text.trim() : undefined;
}

function redact(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = "***";
  return parsed.toString();
}
