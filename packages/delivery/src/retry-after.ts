// IMF-fixdate, RFC 850 and asctime all start with a day name; Date.parse alone accepts "1.5".
const HTTP_DATE = /^[A-Za-z]{3,9},? /;
const DELTA_SECONDS = /^\d+$/;
// The zones an HTTP date may name, GMT's aliases, and RFC 2822's North American ones, which some
// servers send though HTTP asks for GMT: read in their zone, not as GMT hours off.
const HAS_ZONE = /(?:GMT|UTC|UT|Z|[ECMP][SD]T|[+-]\d{4})$/i;

/**
 * Reads a Retry-After value (delta seconds or an HTTP date) as milliseconds from `nowMs`.
 * Gives undefined when it is missing, malformed or in the past; huge values are kept for the
 * retry policy to clamp.
 */
export function parseRetryAfter(value: string | string[] | undefined, nowMs: number): number | undefined {
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  if (text === undefined || text === "") return undefined;
  if (DELTA_SECONDS.test(text)) {
    return Math.min(Number(text) * 1000, Number.MAX_SAFE_INTEGER);
  }
  if (!HTTP_DATE.test(text)) return undefined;
  // HTTP dates are GMT; asctime's form names no zone, which Date.parse would read as local time.
  const at = Date.parse(HAS_ZONE.test(text) ? text : `${text} GMT`);
  if (Number.isNaN(at) || at < nowMs) return undefined;
  return at - nowMs;
}
