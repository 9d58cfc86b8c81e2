import type { ChangeSignals, SignalTopic } from "./change-signals.js";

/** Signals within one process (the embedded service, whose PGlite belongs to that one process). */
export function inProcessSignals(): ChangeSignals {
  return {
    attemptsRecorded: localTopic(),
    endpointsChanged: localTopic(),
    workFed: localTopic(),
    close: async () => {},
  };
}

/** A topic whose subscribers all live in this process; publish calls them synchronously. */
export function localTopic<T>(): SignalTopic<T> {
  const listeners = new Set<(news: T) => void>();
  return {
    publish(news) {
      for (const listener of listeners) listener(news);
    },
    async subscribe(listener) {
      // Wrapped, so that the same function subscribed twice is also unsubscribed twice.
      const entry = (news: T) => listener(news);
      listeners.add(entry);
      return () => {
        listeners.delete(entry);
      };
    },
  };
}
