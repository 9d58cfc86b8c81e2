import { useCallback, useEffect, useRef, useState } from "react";
import { errorText } from "./api.js";
import { useLatest } from "./latest.js";

export interface Page<T> {
  items: T[];
  nextPageToken: string;
}

/** One List call; it must change identity exactly when the query does (useCallback over it). */
export type FetchPage<T> = (pageSize: number, pageToken: string, signal: AbortSignal) => Promise<Page<T>>;

const PAGE = 50;
/** The largest page the api serves. */
const MAX_PAGE = 1000;

/**
 * A paged list (oldest first) kept as "its first N rows": Load more reads N + 50, a refresh reads
 * the same N again (or, once the end was reached, up to a page past it, so new rows appear), each
 * from the first page on. Every answer therefore replaces the rows whole: a refresh never drops pages
 * already loaded, and answers racing each other cannot splice two queries together. Rows added
 * here (an endpoint just created) stay shown after the loaded ones until a read includes them.
 */
export function usePagedList<T>(fetchPage: FetchPage<T>, keyOf: (item: T) => string) {
  const [rows, setRows] = useState<T[] | undefined>();
  const [added, setAdded] = useState<T[]>([]);
  const [more, setMore] = useState(false);
  const [error, setError] = useState("");
  const latest = useLatest();
  // What the newest shown answer held, for refresh and loadMore to size their reads.
  const shown = useRef({ count: PAGE, more: true });
  // Rows asked for by Load more: a refresh answering first (shorter, so sooner) must not undo it.
  const wanted = useRef(PAGE);
  // Bumped when the query changes or the page goes: a refresh loop of the old one stops.
  const view = useRef(0);

  const read = useCallback(
    async (want: number) => {
      const call = latest.start();
      try {
        const items: T[] = [];
        let token = "";
        do {
          const page = await fetchPage(Math.min(MAX_PAGE, want - items.length), token, call.signal);
          items.push(...page.items);
          token = page.nextPageToken;
        } while (token !== "" && items.length < want);
        if (!call.take()) return;
        shown.current = { count: items.length, more: token !== "" };
        setRows(items);
        setMore(token !== "");
        setError("");
      } catch (e) {
        if (call.take()) setError(errorText(e));
      }
    },
    [fetchPage, latest],
  );

  useEffect(() => {
    latest.reset();
    view.current += 1;
    shown.current = { count: PAGE, more: true };
    wanted.current = PAGE;
    setRows(undefined);
    setAdded([]);
    setMore(false);
    setError("");
    void read(PAGE);
    return () => {
      view.current += 1;
      latest.reset();
    };
  }, [read, latest]);

  // Refreshes come in bursts (one per live attempt): one read at a time, then one more for the
  // requests that came while it ran, with the query current by then.
  const readNow = useRef(read);
  readNow.current = read;
  const refreshing = useRef({ running: false, again: false });
  const refresh = useCallback(async () => {
    const r = refreshing.current;
    if (r.running) {
      r.again = true;
      return;
    }
    r.running = true;
    const at = view.current;
    try {
      do {
        r.again = false;
        // Past the end, one page more: new rows appear, and Load more offers the rest, rather than
        // every refresh reading a busy tenant's list to its end.
        const { count, more } = shown.current;
        await readNow.current(Math.max(wanted.current, more ? count : count + PAGE));
      } while (r.again && view.current === at);
    } finally {
      r.running = false;
    }
  }, []);
  const loadMore = useCallback(() => {
    wanted.current = shown.current.count + PAGE;
    void read(wanted.current);
  }, [read]);

  const update = useCallback((change: (items: T[]) => T[]) => {
    setRows((old) => old && change(old));
    setAdded(change);
  }, []);
  const add = useCallback((item: T) => setAdded((old) => [...old, item]), []);

  const loaded = new Set(rows?.map(keyOf));
  const items = rows && [...rows, ...added.filter((item) => !loaded.has(keyOf(item)))];
  return { items, more, error, refresh, loadMore, update, add };
}
