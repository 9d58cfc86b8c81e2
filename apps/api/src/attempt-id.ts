// Attempt ids are int8 cursors: the store hands them out as strings (pg does not narrow int8), the
// contract carries them as int64 (bigint), and the api compares them as bigints. These two
// functions are the only crossing between the two forms.

/** An attempt id from the store, as the contract and the api's comparisons take it. */
export function attemptIdFromStore(id: string): bigint {
  return BigInt(id);
}

/** An attempt id, as the store's cursor queries take it. */
export function attemptIdForStore(id: bigint): string {
  return id.toString();
}
