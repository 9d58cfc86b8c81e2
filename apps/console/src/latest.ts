import { useMemo, useRef } from "react";

/** One call started through useLatest: its signal, and whether its answer may still be shown. */
export interface Call {
  signal: AbortSignal;
  /** True (once) if this answer is the newest so far of the current view; record it as shown. */
  take(): boolean;
}

/**
 * Keeps answers of overlapping calls from overwriting newer ones. A view (a tenant, a filter, a
 * delivery) starts with reset(), which aborts every call of the previous one; within a view an
 * answer is shown only if no call started after it was shown first. Dropping late answers of the
 * same view (rather than every answer but the last call's) keeps a steady stream of refreshes from
 * starving the page.
 */
export function useLatest() {
  const state = useRef({ issued: 0, shown: 0, since: 0, abort: new AbortController() });
  return useMemo(
    () => ({
      reset() {
        const s = state.current;
        s.abort.abort();
        s.abort = new AbortController();
        s.since = s.issued + 1;
      },
      start(): Call {
        const s = state.current;
        const seq = ++s.issued;
        const { signal } = s.abort;
        return {
          signal,
          take() {
            if (signal.aborted || seq < s.since || seq <= s.shown) return false;
            s.shown = seq;
            return true;
          },
        };
      },
    }),
    [],
  );
}
