import { createHash } from "node:crypto";

/**
 * Keyset page tokens, opaque to clients: the last seen sequence number and a digest of what was
 * listed (which list, with which filters). A token given back with other filters, or to another
 * list or tenant, is refused rather than read as a position in a list it was not issued for, where
 * it would skip rows or end the list early without a word.
 */
export function encodePageToken(seq: string, scope: string): string {
  return Buffer.from(`k2.${seq}.${digest(scope)}`).toString("base64url");
}

/**
 * The sequence number in a page token issued for this scope; throws on a token this service did
 * not make, or made for another list or other filters. Tokens from before they carried their
 * scope (k1) are refused too: one is easily made up, and would be read as a position anywhere.
 */
export function decodePageToken(token: string, scope: string): string | undefined {
  if (token === "") return undefined;
  const text = Buffer.from(token, "base64url").toString();
  const match = /^k2\.(\d{1,19})\.([\w-]{11})$/.exec(text);
  const seq = match?.[1];
  // Beyond int64 no row can follow; refuse it here rather than as a SQL range error.
  if (!seq || BigInt(seq) > 9_223_372_036_854_775_807n) throw new InvalidPageTokenError();
  if (match?.[2] !== digest(scope)) {
    throw new InvalidPageTokenError(
      "page_token was issued for another list or other filters: send the same filters, or start without it",
    );
  }
  return seq;
}

/**
 * What a page token is bound to: the list and its filters, each empty or unset filter left out so
 * that "" and unset (which list the same rows) are one scope. Dates count to the millisecond.
 */
export function pageScope(list: string, filters: Record<string, string | Date | undefined | null>): string {
  const set = Object.entries(filters)
    .filter(([, value]) => value !== undefined && value !== null && value !== "")
    .map(([name, value]) => [name, value instanceof Date ? value.toISOString() : value])
    .sort(([a], [b]) => String(a).localeCompare(String(b)));
  return JSON.stringify([list, set]);
}

function digest(scope: string): string {
  // 64 bits: a token meets a scope it was not made for only by a client's mistake, not an attack
  // (the filters are checked against the caller's rights on every call, whatever the token).
  return createHash("sha256").update(scope).digest("base64url").slice(0, 11);
}

export class InvalidPageTokenError extends Error {
  constructor(message = "page_token is not a token this service issued") {
    super(message);
    this.name = "InvalidPageTokenError";
  }
}

/** Splits a page of limit+1 rows into the page and the token, bound to scope, for the next one. */
export function pageOf<T>(
  rows: T[],
  limit: number,
  seqOf: (row: T) => string,
  scope: string,
): { items: T[]; nextPageToken: string } {
  if (rows.length <= limit) return { items: rows, nextPageToken: "" };
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  return { items, nextPageToken: last === undefined ? "" : encodePageToken(seqOf(last), scope) };
}
