import type { RedisOptions } from "@hookline/config";

/** Which backends a test run uses: set by `pnpm test:embedded` and `pnpm test:servers`. */
export type TestBackendKind = "embedded" | "servers";

/** Where a test run finds its servers; read once from the environment by the test's entry point. */
export interface TestSettings {
  kind: TestBackendKind;
  /** A PostgreSQL role that may create and drop databases. */
  adminUrl: string;
  redis: RedisOptions;
}

/**
 * Parses the test run's variables: HOOKLINE_TEST_BACKEND (embedded | servers),
 * HOOKLINE_TEST_DATABASE_URL, HOOKLINE_TEST_REDIS_HOST and HOOKLINE_TEST_REDIS_PORT.
 */
export function readTestSettings(env: Readonly<Record<string, string | undefined>>): TestSettings {
  const port = Number(env.HOOKLINE_TEST_REDIS_PORT ?? 6379);
  if (!Number.isInteger(port) || port <= 0 || port > 65535)
    throw new Error(`HOOKLINE_TEST_REDIS_PORT must be a port number, not "${env.HOOKLINE_TEST_REDIS_PORT}"`);
  return {
    kind: env.HOOKLINE_TEST_BACKEND === "servers" ? "servers" : "embedded",
    adminUrl: env.HOOKLINE_TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres",
    redis: { host: env.HOOKLINE_TEST_REDIS_HOST ?? "127.0.0.1", port, db: 0 },
  };
}
