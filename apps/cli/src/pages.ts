/** One page of a keyset-paged list RPC. */
export interface Page<T> {
  items: T[];
  nextPageToken: string;
}

/**
 * Follows page tokens until `limit` items are collected or the list ends; `more` says whether
 * items were left out.
 */
export async function collect<T>(
  fetch: (pageSize: number, pageToken: string) => Promise<Page<T>>,
  limit: number,
): Promise<{ items: T[]; more: boolean }> {
  const items: T[] = [];
  let pageToken = "";
  do {
    const page = await fetch(Math.min(1000, limit - items.length), pageToken);
    items.push(...page.items);
    pageToken = page.nextPageToken;
  } while (pageToken && items.length < limit);
  return { items: items.slice(0, limit), more: pageToken !== "" || items.length > limit };
}
