import { randomBytes } from "node:crypto";
import type { FedQueue } from "@hookline/queue";
import type { StoreConnection } from "@hookline/store";
import { type Listener, listen, notify } from "@hookline/store/pg-plumbing";
import type { ChangeSignals, SignalTopic } from "./change-signals.js";
import { localTopic } from "./in-process-signals.js";
import type { Logger } from "./logger.js";
import { decodeWorkNews, encodeWorkNews } from "./work-news.js";

/** How one topic's news travels as a NOTIFY payload. */
interface Codec<T> {
  encode(news: T): string;
  /** "" is the news a reconnected listener gives: something may have been missed. */
  decode(body: string): T;
}

const NO_DATA: Codec<void> = { encode: () => "", decode: () => undefined };
const WORK_NEWS: Codec<FedQueue[] | undefined> = {
  encode: (fed) => (fed ? encodeWorkNews(fed) : ""),
  decode: decodeWorkNews,
};

/**
 * Signals across processes on a real PostgreSQL: publish tells this process's subscribers at once
 * and NOTIFYs the others; the first subscription to a topic opens a LISTEN connection for it.
 */
export function postgresSignals(store: Pick<StoreConnection, "db" | "pgConfig">, log: Logger): ChangeSignals {
  // Tags this process's payloads, so that its LISTEN connections skip news it already gave in process.
  const origin = randomBytes(6).toString("hex");
  const listeners = new Set<Promise<Listener>>();
  let closed = false;

  const topic = <T>(channel: string, codec: Codec<T>): SignalTopic<T> => {
    const local = localTopic<T>();
    let listening: Promise<Listener> | undefined;
    const startListening = (): Promise<Listener> => {
      if (listening) return listening;
      const started = listen(
        store.pgConfig,
        channel,
        (payload) => {
          const body = payload === "" ? "" : bodyFromOthers(payload, origin);
          if (body !== undefined) local.publish(codec.decode(body));
        },
        (error) => log.warn("signal connection lost; reconnecting", { channel, error: error.message }),
      );
      listening = started;
      listeners.add(started);
      // A failed first connection is the subscriber's error; the next subscriber tries afresh.
      started.catch(() => {
        listeners.delete(started);
        if (listening === started) listening = undefined;
      });
      return started;
    };
    return {
      publish(news) {
        local.publish(news);
        if (closed) return;
        notify(store.db, channel, `${origin}:${codec.encode(news)}`).catch((error: Error) =>
          log.warn("signal not sent; listeners find the change on their next poll", {
            channel,
            error: error.message,
          }),
        );
      },
      async subscribe(listener) {
        const unsubscribe = await local.subscribe(listener);
        if (closed) return unsubscribe;
        try {
          await startListening();
        } catch (error) {
          unsubscribe();
          throw error;
        }
        return unsubscribe;
      },
    };
  };

  return {
    attemptsRecorded: topic("hookline_attempts", NO_DATA),
    endpointsChanged: topic("hookline_endpoints", NO_DATA),
    workFed: topic("hookline_work", WORK_NEWS),
    async close() {
      closed = true;
      const open = [...listeners];
      listeners.clear();
      await Promise.all(open.map((started) => started.then((l) => l.close()).catch(() => {})));
    },
  };
}

/** The body of a payload another process sent; undefined when this process sent it. */
function bodyFromOthers(payload: string, origin: string): string | undefined {
  const colon = payload.indexOf(":");
  if (colon < 0) return payload;
  return payload.slice(0, colon) === origin ? undefined : payload.slice(colon + 1);
}
