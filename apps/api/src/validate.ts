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

function checkId(field: string, value: string): string {
  if (value.length > LIMITS.idLength) {
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
  const problem = literalUrlProblem(value, policy);
  if (problem !== undefined) throw new InvalidArgumentError(field, problem);
  return value;
}

export function requireEventType(field: string, value: string): string {
  if (value === "") throw new InvalidArgumentError(field, "is required");
  if (value.length > LIMITS.eventTypeLength) {
    throw new InvalidArgumentError(field, `is longer than ${LIMITS.eventTypeLength} characters`);
  }
  if (CONTROL.test(value) || /\s/.test(value)) {
    throw new InvalidArgumentError(field, "must not contain spaces or control characters");
  }
  return value;
}

export function eventTypeList(field: string, values: readonly string[]): string[] {
  if (values.length > LIMITS.eventTypes) {
    throw new InvalidArgumentError(field, `lists more than ${LIMITS.eventTypes} types`);
  }
  return [...new Set(values.map((value, i) => requireEventType(`${field}[${i}]`, value)))];
}

export function description(field: string, value: string): string {
  if (value.length > LIMITS.descriptionLength) {
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

/** A protobuf Duration as milliseconds; negative or malformed ones are refused. */
export function durationMs(field: string, value: { seconds: bigint; nanos: number }): number {
  if (value.seconds < 0n || value.nanos < 0 || value.nanos > 999_999_999) {
    throw new InvalidArgumentError(field, "must be a non-negative duration");
  }
  if (value.seconds > 10n ** 12n) throw new InvalidArgumentError(field, "is too long");
  return Number(value.seconds) * 1000 + Math.floor(value.nanos / 1e6);
}

export const MAX_IN_FLIGHT_LIMIT = 1000;
export const MAX_RATE_PER_SECOND = 10_000;

/**
 * An endpoint's in-flight cap: 1 to 1000. On update, 0 returns to the service default (null);
 * undefined leaves it as it is.
 */
export function maxInFlight(
  field: string,
  value: number | undefined,
  zeroClears: boolean,
): number | null | undefined {
  if (value === undefined) return undefined;
  if (value === 0 && zeroClears) return null;
  if (!Number.isInteger(value) || value < 1 || value > MAX_IN_FLIGHT_LIMIT) {
    throw new InvalidArgumentError(
      field,
      `must be from 1 to ${MAX_IN_FLIGHT_LIMIT}${zeroClears ? " (0 for the service default)" : ""}`,
    );
  }
  return value;
}

/** An endpoint's rate limit in attempts per second: above 0, at most 10000. On update, 0 removes it (null). */
export function ratePerSecond(
  field: string,
  value: number | undefined,
  zeroClears: boolean,
): number | null | undefined {
  if (value === undefined) return undefined;
  if (value === 0 && zeroClears) return null;
  if (!Number.isFinite(value) || value <= 0 || value > MAX_RATE_PER_SECOND) {
    throw new InvalidArgumentError(
      field,
      `must be above 0 and at most ${MAX_RATE_PER_SECOND}${zeroClears ? " (0 for no limit)" : ""}`,
    );
  }
  return value;
}
