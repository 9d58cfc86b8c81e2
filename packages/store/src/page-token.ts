/** Keyset page tokens: the last seen sequence number, opaque to clients. */
export function encodePageToken(seq: string): string {
  return Buffer.from(`k1.${seq}`).toString("base64url");
}

/** The sequence number in a page token; throws on a token this service did not make. */
export function decodePageToken(token: string): string | undefined {
  if (token === "") return undefined;
  const text = Buffer.from(token, "base64url").toString();
  const match = /^k1\.(\d{1,19})$/.exec(text);
  // Beyond int64 no row can follow; refuse it here rather than as a SQL range error.
  if (!match?.[1] || BigInt(match[1]) > 9_223_372_036_854_775_807n) throw new InvalidPageTokenError();
  return match[1];
}

export class InvalidPageTokenError extends Error {
  constructor() {
    super("page_token is not a token this service issued");
    this.name = "InvalidPageTokenError";
  }
}

/** Splits a page of limit+1 rows into the page and the token for the next one. */
export function pageOf<T>(
  rows: T[],
  limit: number,
  seqOf: (row: T) => string,
): { items: T[]; nextPageToken: string } {
  if (rows.length <= limit) return { items: rows, nextPageToken: "" };
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  return { items, nextPageToken: last === undefined ? "" : encodePageToken(seqOf(last)) };
}
