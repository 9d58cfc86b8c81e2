const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, min: 60_000, h: 3_600_000, d: 86_400_000 };

/** Parses "250ms", "5s", "30m", "2h" or "1d" into milliseconds; throws on anything else. */
export function parseDuration(text: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|min|m|h|d)\s*$/.exec(text);
  const unit = match?.[2];
  if (!match || unit === undefined) {
    throw new Error(`"${text}" is not a duration (use a number with ms, s, m, h or d, e.g. 500ms or 5m)`);
  }
  return Math.round(Number(match[1]) * (UNITS[unit] ?? 1));
}

/** Parses a comma-separated list of durations, e.g. "50ms,100ms,200ms". */
export function parseDurationList(text: string): number[] {
  const parts = text
    .split(",")
    .map((p) => p.trim())
    .filter((p) => p.length > 0);
  return parts.map(parseDuration);
}

/** HOOKLINE_RETRY_SCHEDULE: 1 to 50 waits ("," parses to none, which would turn retries off unsaid). */
export function parseRetrySchedule(text: string): number[] {
  const waits = parseDurationList(text);
  if (waits.length === 0) throw new Error("must list at least one wait");
  if (waits.length > 50) throw new Error("may list at most 50 waits");
  return waits;
}
