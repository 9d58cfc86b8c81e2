import type { Logger } from "./logger.js";

/**
 * Runs an app's start-up; a failure (bad configuration, unreachable database or Redis) ends the
 * process with one readable log line and exit code 1 instead of an unhandled rejection's dump.
 */
export async function runMain(log: Logger, start: () => Promise<void>): Promise<void> {
  try {
    await start();
  } catch (error) {
    log.error("failed to start", { error: describe(error) });
    process.exit(1);
  }
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as { code?: unknown }).code;
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : "";
  return `${error.message}${typeof code === "string" ? ` (${code})` : ""}${cause}`;
}
