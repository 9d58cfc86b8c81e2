import type { FedQueue } from "@hookline/queue";

/** One kind of news between the parts of Hookline. */
export interface SignalTopic<T> {
  /** Tells this process's subscribers at once and, across processes, the other processes' too. */
  publish(news: T): void;
  /**
   * Hears the news from this process and, across processes, from the others; resolves once it is
   * listening. Returns the function that unsubscribes.
   */
  subscribe(listener: (news: T) => void): Promise<() => void>;
}

/**
 * "Something changed, go look": the news carries hints, never the change itself. The store stays
 * the truth, and whoever listens also polls it, since news can be lost (a dropped connection).
 */
export interface ChangeSignals {
  /** Attempts were recorded: WatchAttempts streams read the new ones. */
  readonly attemptsRecorded: SignalTopic<void>;
  /** An endpoint appeared or was re-enabled: workers look for queues to serve. */
  readonly endpointsChanged: SignalTopic<void>;
  /** Jobs were added to these queues (undefined: somewhere, look in the store): workers open them. */
  readonly workFed: SignalTopic<FedQueue[] | undefined>;
  /** Stops listening to other processes (and telling them). */
  close(): Promise<void>;
}
