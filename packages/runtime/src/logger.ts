/** Structured JSON lines on stderr. Callers pass ids, never secrets or payloads. */
export interface Logger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

export function createLogger(
  component: string,
  write: (line: string) => void = (line) => process.stderr.write(line),
): Logger {
  const emit = (level: string) => (message: string, fields?: Record<string, unknown>) =>
    write(`${JSON.stringify({ time: new Date().toISOString(), level, component, message, ...fields })}\n`);
  return { info: emit("info"), warn: emit("warn"), error: emit("error") };
}
