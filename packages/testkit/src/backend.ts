import { randomBytes } from "node:crypto";
import { rm } from "node:fs/promises";
import type { RedisOptions } from "@hookline/config";
import { Redis } from "ioredis";
import pg from "pg";
import { freshEmbeddedDataDir } from "./embedded-data-dir.js";
import type { TestBackendKind, TestSettings } from "./settings.js";

/** A fresh, isolated place to run against: its own database (or in-memory PGlite) and queue prefix. */
export interface TestBackend {
  kind: TestBackendKind;
  /** Undefined: embedded PGlite. */
  databaseUrl: string | undefined;
  /** Undefined: BullMQ's PostgreSQL backend. */
  redis: RedisOptions | undefined;
  prefix: string;
  /** The environment a Hookline process needs to run on this backend (embedded: a fresh data dir). */
  env: Record<string, string>;
  /** Drops the database made for this test. */
  dispose(): Promise<void>;
}

// Test receivers listen on loopback, which deliveries may reach only when it is allowed.
const LOOPBACK = "127.0.0.0/8";

/** Creates a backend for one test: a new database on the real PostgreSQL, or nothing for PGlite. */
export async function createTestBackend(
  settings: TestSettings,
  kind: TestBackendKind = settings.kind,
): Promise<TestBackend> {
  const { adminUrl, redis } = settings;
  const prefix = `t${randomBytes(4).toString("hex")}`;
  if (kind === "embedded") {
    const dataDir = await freshEmbeddedDataDir("hookline-test-");
    return {
      kind,
      databaseUrl: undefined,
      redis: undefined,
      prefix,
      env: { HOOKLINE_DATA_DIR: dataDir, BULLMQ_PREFIX: prefix, HOOKLINE_ALLOWED_CIDRS: LOOPBACK },
      dispose: () => rm(dataDir, { recursive: true, force: true }),
    };
  }
  const name = `hookline_test_${prefix}`;
  await withAdmin(adminUrl, (client) => client.query(`create database ${name}`));
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    kind,
    databaseUrl: url.toString(),
    redis,
    prefix,
    env: {
      DATABASE_URL: url.toString(),
      REDIS_URL: `redis://${redis.host}:${redis.port}/0`,
      BULLMQ_PREFIX: prefix,
      HOOKLINE_ALLOWED_CIDRS: LOOPBACK,
    },
    async dispose() {
      await withAdmin(adminUrl, (client) => client.query(`drop database if exists ${name} with (force)`));
      await deleteRedisKeys(redis, `${prefix}:*`);
    },
  };
}

async function withAdmin<T>(adminUrl: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Removes the keys a test's queues left in Redis (every database a test may have used). */
async function deleteRedisKeys(options: RedisOptions, pattern: string): Promise<void> {
  const redis = new Redis({ ...options, lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    for (let db = 0; db < 16; db++) {
      await redis.select(db);
      const keys: string[] = [];
      for await (const batch of redis.scanStream({ match: pattern, count: 1000 }))
        keys.push(...(batch as string[]));
      for (let i = 0; i < keys.length; i += 500) await redis.unlink(...keys.slice(i, i + 500));
    }
  } finally {
    redis.disconnect();
  }
}
