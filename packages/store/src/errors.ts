import { DatabaseTimeoutError } from "./database-timeouts.js";

/** A row the caller named does not exist. */
export class NotFoundError extends Error {
  constructor(readonly what: string) {
    super(`${what} not found`);
    this.name = "NotFoundError";
  }
}

/** A row with that key exists already. */
export class AlreadyExistsError extends Error {
  constructor(readonly what: string) {
    super(`${what} already exists`);
    this.name = "AlreadyExistsError";
  }
}

/** A quota would be exceeded (e.g. endpoints per tenant); nothing was written. */
export class QuotaExceededError extends Error {
  constructor(
    readonly what: string,
    readonly limit: number,
  ) {
    super(`the limit of ${limit} ${what} is reached`);
    this.name = "QuotaExceededError";
  }
}

/**
 * A schema migration gave up waiting for a table lock that another session holds. It was rolled
 * back whole: the schema is as it was, and starting again once that session ends completes it.
 */
export class MigrationLockTimeoutError extends Error {
  constructor(
    readonly migration: string,
    readonly waitedMs: number,
  ) {
    super(
      `the store's schema migration ${migration} waited ${waitedMs / 1000} s for a table lock that ` +
        "another session holds (a long transaction or query on the hookline tables) and was rolled " +
        "back, nothing changed: start again once that session ends",
    );
    this.name = "MigrationLockTimeoutError";
  }
}

const CONNECTION_CODES = new Set([
  // query_canceled: the server's statement_timeout, what a database too busy to answer in time gives.
  "57014",
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "ENOTFOUND",
  "57P01",
  "57P03",
]);

/** True for errors that mean "could not talk to the database (in time)", not "the query was wrong". */
export function isConnectionError(error: unknown): boolean {
  if (error instanceof DatabaseTimeoutError) return true;
  if (typeof error !== "object" || error === null) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string" && (CONNECTION_CODES.has(code) || code.startsWith("08"))) return true;
  const message = (error as { message?: unknown }).message;
  return (
    typeof message === "string" &&
    /Connection terminated|connection timeout|Client has encountered/.test(message)
  );
}

/**
 * True when the database could not be reached at all (refused, reset, closed), not when it was
 * too slow: a statement or a connect that ran out of time (DatabaseTimeoutError, 57014) says the
 * server is busy, or one query is, which a wait in every queue would not mend.
 */
export function isConnectionLost(error: unknown): boolean {
  if (error instanceof DatabaseTimeoutError) return false;
  if (typeof error === "object" && error !== null && (error as { code?: unknown }).code === "57014")
    return false;
  return isConnectionError(error);
}

export function isUniqueViolation(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { code?: unknown }).code === "23505";
}

/** PostgreSQL's lock_not_available: a statement gave up waiting for a lock (lock_timeout). */
export function isLockTimeout(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { code?: unknown }).code === "55P03";
}
