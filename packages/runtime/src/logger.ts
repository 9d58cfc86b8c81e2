import { pino } from "pino";

/** Structured JSON lines. Callers pass ids, never payloads; known secret fields are redacted anyway. */
export interface Logger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/** A pino logger on stderr (or on `write`, for tests), one JSON object per line. */
export function createLogger(component: string, write?: (line: string) => void): Logger {
  const logger = pino(
    {
      base: { component },
      messageKey: "message",
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: ["secret", "token", "authorization", "*.secret", "*.token"], censor: "[redacted]" },
    },
    // Synchronous stderr: lines logged just before exit (start-up failures, SIGTERM) are not lost.
    write ? { write } : pino.destination({ dest: 2, sync: true }),
  );
  return {
    info: (message, fields) => logger.info(fields ?? {}, message),
    warn: (message, fields) => logger.warn(fields ?? {}, message),
    error: (message, fields) => logger.error(fields ?? {}, message),
  };
}
