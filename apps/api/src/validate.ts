import { type AddressPolicy, literalUrlProblem } from "@hookline/delivery";

/** A request field that is missing or malformed; the message names the field. */
export class InvalidArgumentError extends Error {
  constructor(
    readonly field: string,
    reason: string,
  ) {
    super(`${field} ${reason}`);
    this.name = "InvalidArgumentError";
  }
}

export const LIMITS = {
  idLength: 256,
  urlLength: 2048,
  descriptionLength: 1024,
  eventTypes: 100,
  eventTypeLength: 256,
  defaultPageSize: 100,
  maxPageSize: 1000,
} as const;

/** Length in characters (code points), as a reader counts them: an emoji is one, not two. */
function characters(value: string): number {
  let count = 0;
  for (const _ of value) count++;
  return count;
}

// C0 and C1 control characters have no place in ids or types (they break logs and headers).
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** A required identifier: non-empty, at most 256 characters, no control characters. */
export function requireId(field: string, value: string): string {
  if (value === "") throw new InvalidArgumentError(field, "is required");
  return checkId(field, value);
}

/** An optional identifier: "" means "generate one" (or "any" for filters). */
export function optionalId(field: string, value: string): string {
  return value === "" ? "" : checkId(field, value);
}

// A header value every HTTP client sends as is: printable ASCII, space to tilde (RFC 9110 field-vchar
// and SP, without obs-text). Anything else is refused by undici or goes out as raw bytes.
const HEADER_SAFE = /^[\u0020-\u007e]*$/;

/**
 * An id that becomes an HTTP header value (the event id is the webhook-id of every delivery):
 * the id rules, plus printable ASCII only, so that every attempt can actually be sent.
 */
export function optionalHeaderId(field: string, value: string): string {
  const id = optionalId(field, value);
  if (!HEADER_SAFE.test(id)) {
    throw new InvalidArgumentError(field, "must be printable ASCII (it is sent as the webhook-id header)");
  }
  return id;
}

function checkId(field: string, value: string): string {
  if (characters(value) > LIMITS.idLength) {
    throw new InvalidArgumentError(field, `is longer than ${LIMITS.idLength} characters`);
  }
  if (CONTROL.test(value)) throw new InvalidArgumentError(field, "contains control characters");
  if (value.trim() !== value) throw new InvalidArgumentError(field, "has leading or trailing spaces");
  return value;
}

/**
 * A webhook URL: absolute http(s), no credentials, and no literal address the policy blocks
 * (a hostname is checked after DNS, on every delivery).
 */
export function requireUrl(field: string, value: string, policy: AddressPolicy): string {
  if (value === "") throw new InvalidArgumentError(field, "is required");
  if (value.length > LIMITS.urlLength) {
    throw new InvalidArgumentError(field, `is longer than ${LIMITS.urlLength} characters`);
  }
  // The URL parser drops surrounding spaces and tabs/newlines, and PostgreSQL text cannot hold NUL.
  if (CONTROL.test(value) || value.trim() !== value) {
    throw new InvalidArgumentError(field, "must not contain control characters or surrounding spaces");
  }
  // Spaces in the middle would be percent-encoded into a URL the caller never wrote.
  if (/\s/.test(value)) throw new InvalidArgumentError(field, "must not contain whitespace");
  const problem = literalUrlProblem(value, policy);
  if (problem !== undefined) throw new InvalidArgumentError(field, problem);
  // Stored, shown and delivered to in WHATWG serialisation, so what a caller reads back is what
  // a delivery connects to (`http:example.com` and `http://a.test\@b/` are not what they seem).
  const href = new URL(value).href;
  // The limit holds for what is stored: percent-encoding can make a URL several times longer.
  if (href.length > LIMITS.urlLength) {
    throw new InvalidArgumentError(
      field,
      `is longer than ${LIMITS.urlLength} characters once percent-encoded`,
    );
  }
  return href;
}

export function requireEventType(field: string, value: string): string {
  if (value === "") throw new InvalidArgumentError(field, "is required");
  if (characters(value) > LIMITS.eventTypeLength) {
    throw new InvalidArgumentError(field, `is longer than ${LIMITS.eventTypeLength} characters`);
  }
  if (CONTROL.test(value) || /\s/.test(value)) {
    throw new InvalidArgumentError(field, "must not contain spaces or control characters");
  }
  return value;
}

export function eventTypeList(field: string, values: readonly string[]): string[] {
  // The limit is on the types an endpoint keeps: a repeated one is kept once, so it counts once.
  const types = [...new Set(values.map((value, i) => requireEventType(`${field}[${i}]`, value)))];
  if (types.length > LIMITS.eventTypes) {
    throw new InvalidArgumentError(field, `lists more than ${LIMITS.eventTypes} types`);
  }
  return types;
}

export function description(field: string, value: string): string {
  if (characters(value) > LIMITS.descriptionLength) {
    throw new InvalidArgumentError(field, `is longer than ${LIMITS.descriptionLength} characters`);
  }
  // PostgreSQL text cannot hold NUL; other characters, newlines included, are the caller's to choose.
  if (value.includes("\u0000")) throw new InvalidArgumentError(field, "must not contain NUL characters");
  return value;
}

export function jsonText(field: string, value: string, maxBytes: number): string {
  if (value === "") throw new InvalidArgumentError(field, "is required (use null for no data)");
  if (Buffer.byteLength(value) > maxBytes)
    throw new InvalidArgumentError(field, `is larger than ${maxBytes} bytes`);
  try {
    JSON.parse(value);
  } catch {
    throw new InvalidArgumentError(field, "is not valid JSON");
  }
  return value;
}

export function pageSize(field: string, value: number): number {
  if (value === 0) return LIMITS.defaultPageSize;
  if (!Number.isInteger(value) || value < 0 || value > LIMITS.maxPageSize) {
    throw new InvalidArgumentError(field, `must be from 1 to ${LIMITS.maxPageSize} (0 for the default)`);
  }
  return value;
}

// google.protobuf.Timestamp's documented range: 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999999999Z.
const MIN_TIMESTAMP_SECONDS = -62_135_596_800n;
const MAX_TIMESTAMP_SECONDS = 253_402_300_799n;
// google.protobuf.Duration's documented range: about ±10,000 years.
const MAX_DURATION_SECONDS = 315_576_000_000n;

/**
 * A protobuf Timestamp as a Date, rounded up to the millisecond: the store's times are whole
 * milliseconds, so `at or after` and `before` ask the same of them as of the time sent. One
 * outside the type's documented range is refused.
 */
export function timestamp(field: string, value: { seconds: bigint; nanos: number }): Date {
  if (!Number.isInteger(value.nanos) || value.nanos < 0 || value.nanos > 999_999_999) {
    throw new InvalidArgumentError(field, "has nanos outside 0 to 999999999");
  }
  if (value.seconds < MIN_TIMESTAMP_SECONDS || value.seconds > MAX_TIMESTAMP_SECONDS) {
    throw new InvalidArgumentError(field, "is outside 0001-01-01 to 9999-12-31");
  }
  return new Date(Number(value.seconds) * 1000 + Math.ceil(value.nanos / 1e6));
}

/** A protobuf Duration as milliseconds; negative, malformed or out-of-range ones are refused. */
export function durationMs(field: string, value: { seconds: bigint; nanos: number }): number {
  if (!Number.isInteger(value.nanos) || value.nanos < 0 || value.nanos > 999_999_999) {
    throw new InvalidArgumentError(field, "must be a non-negative duration with nanos from 0 to 999999999");
  }
  if (value.seconds < 0n) throw new InvalidArgumentError(field, "must be a non-negative duration");
  if (value.seconds > MAX_DURATION_SECONDS) throw new InvalidArgumentError(field, "is out of range");
  return Number(value.seconds) * 1000 + Math.floor(value.nanos / 1e6);
}

export const MAX_IN_FLIGHT_LIMIT = 1000;
export const MAX_RATE_PER_SECOND = 10_000;
/** One start a day: below it a rate is no limit anyone means, and its window outgrows BullMQ's. */
export const MIN_RATE_PER_SECOND = 1 / 86_400;

/** An endpoint limit's rule: which values are valid, said in words, and what 0 means on update. */
interface LimitRule {
  valid(value: number): boolean;
  range: string;
  zeroMeans: string;
}

const IN_FLIGHT: LimitRule = {
  valid: (v) => Number.isInteger(v) && v >= 1 && v <= MAX_IN_FLIGHT_LIMIT,
  range: `from 1 to ${MAX_IN_FLIGHT_LIMIT}`,
  zeroMeans: "the service default",
};

const RATE: LimitRule = {
  valid: (v) => Number.isFinite(v) && v >= MIN_RATE_PER_SECOND && v <= MAX_RATE_PER_SECOND,
  range: `from 1/86400 (one a day) to ${MAX_RATE_PER_SECOND}`,
  zeroMeans: "no limit",
};

/**
 * An endpoint limit: undefined leaves it as it is; on update (zeroClears), 0 returns it to its
 * default (null); anything else must be in range.
 */
function endpointLimit(
  rule: LimitRule,
  field: string,
  value: number | undefined,
  zeroClears: boolean,
): number | null | undefined {
  if (value === undefined) return undefined;
  if (value === 0 && zeroClears) return null;
  if (!rule.valid(value)) {
    throw new InvalidArgumentError(
      field,
      `must be ${rule.range}${zeroClears ? ` (0 for ${rule.zeroMeans})` : ""}`,
    );
  }
  return value;
}

/** An endpoint's in-flight cap: 1 to 1000 (0 on update: the service default). */
export function maxInFlight(field: string, value: number | undefined, zeroClears: boolean) {
  return endpointLimit(IN_FLIGHT, field, value, zeroClears);
}

/** An endpoint's rate limit in attempts per second: one a day to 10000 (0 on update: none). */
export function ratePerSecond(field: string, value: number | undefined, zeroClears: boolean) {
  return endpointLimit(RATE, field, value, zeroClears);
}
