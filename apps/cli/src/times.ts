import { type Duration, durationFromMs, type Timestamp, timestampFromMs } from "@bufbuild/protobuf/wkt";
import { parseDuration } from "@hookline/config";
import { UsageError } from "./errors.js";

// RFC 3339: a date alone (read as UTC midnight), or a date-time with its zone. A date-time without
// one would be read in the machine's zone: the same command line, another moment elsewhere.
const MOMENT =
  /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-](\d{2}):(\d{2})))?$/i;

/** A TIME option: a moment (RFC 3339) or how long ago ("6h"), the way an operator recalls an outage. */
export function timeOption(
  flag: string,
  text: string,
  nowMs: number,
  command: string | undefined,
): Timestamp {
  const trimmed = text.trim();
  let ago: number | undefined;
  try {
    ago = parseDuration(trimmed);
  } catch {
    // Not a duration: a moment, then.
  }
  if (ago !== undefined) return timestampFromMs(nowMs - ago);
  const ms = momentMs(trimmed);
  if (ms === undefined) {
    throw new UsageError(
      `--${flag} must be a time with its zone (2026-12-01T09:00:00Z) or how long ago (30m, 6h, 2d), not "${text}"`,
      command,
    );
  }
  return timestampFromMs(ms);
}

/** The moment an RFC 3339 text names, or undefined when it is not one (2026-02-30 is not). */
function momentMs(text: string): number | undefined {
  const match = MOMENT.exec(text);
  if (!match) return undefined;
  const [year, month, day, hour = 0, minute = 0, second = 0, zoneHour = 0, zoneMinute = 0] = match
    .slice(1)
    .map((part) => (part === undefined ? undefined : Number(part)));
  const date = new Date(Date.UTC(year ?? 0, (month ?? 1) - 1, day ?? 1));
  const realDate =
    date.getUTCFullYear() === year && date.getUTCMonth() + 1 === month && date.getUTCDate() === day;
  if (!realDate || hour > 23 || minute > 59 || second > 59 || zoneHour > 23 || zoneMinute > 59)
    return undefined;
  // The date alone is midnight UTC; Date.parse reads the rest as RFC 3339 says.
  return match[4] === undefined ? date.getTime() : Date.parse(text);
}

/** A DURATION option ("90s", "30m", "0"); the server checks its range. */
export function durationOption(flag: string, text: string, command: string | undefined): Duration {
  try {
    // A bare 0 needs no unit: "--grace 0" retires old secrets at once, as the README says.
    return durationFromMs(text.trim() === "0" ? 0 : parseDuration(text));
  } catch {
    throw new UsageError(`--${flag} must be a duration such as 90s, 30m, 6h or 2d, not "${text}"`, command);
  }
}

/** The longest wait a timer can hold (2^31 - 1 ms, about 24.8 days): a longer one fires at once. */
const MAX_TIMEOUT_MS = 2_147_483_647;

/** --timeout: how long a call waits for an answer, in ms; more than zero, at most 24 days. */
export function timeoutOption(text: string): number {
  let ms: number;
  try {
    ms = parseDuration(text);
  } catch {
    ms = Number.NaN;
  }
  if (!(ms > 0 && ms <= MAX_TIMEOUT_MS))
    throw new UsageError(
      `--timeout must be a duration above zero and at most 24d, such as 5s or 2m, not "${text}"`,
    );
  return ms;
}
