import { type Duration, durationFromMs, type Timestamp, timestampFromMs } from "@bufbuild/protobuf/wkt";
import { parseDuration } from "@hookline/config";
import { UsageError } from "./errors.js";

/**
 * A TIME option: a moment in RFC 3339 (2026-12-01T09:00:00Z, or a date alone, read as UTC) or how
 * long ago ("6h"), the way an operator recalls an outage.
 */
export function timeOption(
  flag: string,
  text: string,
  nowMs: number,
  command: string | undefined,
): Timestamp {
  let ago: number | undefined;
  try {
    ago = parseDuration(text);
  } catch {
    // Not a duration: a moment, then.
  }
  if (ago !== undefined) return timestampFromMs(nowMs - ago);
  // A date-time needs its zone: without one, Date.parse would take the machine's, and the same
  // command line would mean other moments on other machines.
  const dated = /^\d{4}-\d{2}-\d{2}(T.*(Z|[+-]\d{2}:\d{2}))?$/i.test(text.trim());
  const ms = dated ? Date.parse(text) : Number.NaN;
  if (Number.isNaN(ms)) {
    throw new UsageError(
      `--${flag} must be a time with its zone (2026-12-01T09:00:00Z) or how long ago (30m, 6h, 2d), not "${text}"`,
      command,
    );
  }
  return timestampFromMs(ms);
}

/** A DURATION option ("90s", "30m", "0s"); the server checks its range. */
export function durationOption(flag: string, text: string, command: string | undefined): Duration {
  try {
    return durationFromMs(parseDuration(text));
  } catch {
    throw new UsageError(`--${flag} must be a duration such as 90s, 30m, 6h or 2d, not "${text}"`, command);
  }
}
