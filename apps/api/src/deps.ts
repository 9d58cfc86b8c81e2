import type { AddressPolicy } from "@hookline/delivery";
import type { DeliveryProducer } from "@hookline/queue";
import type { Logger } from "@hookline/runtime";
import type { EmitResult, NewEvent, StoreDb } from "@hookline/store";
import type { AttemptFeed } from "./attempt-feed.js";
import type { HealthWatchSlots } from "./ecosystem/health-watch-slots.js";
import type { StreamLimiter } from "./stream-limiter.js";

/** What the RPC handlers need; built once in the composition root. */
export interface ApiDeps {
  db: StoreDb;
  producer: Pick<DeliveryProducer, "enqueue" | "discard" | "unpause" | "writeLimits" | "currentLimit">;
  /** New attempts for WatchAttempts streams. */
  attemptFeed: AttemptFeed;
  /** Slots for WatchAttempts streams, per token, per tenant and in total. */
  streams: StreamLimiter;
  /** Slots for Health.Watch streams, which need no token: a pool of their own. */
  healthWatches: HealthWatchSlots;
  /** Largest response body kept per attempt: sizes WatchAttempts backfill pages by bytes. */
  maxResponseBytes: number;
  /** Which addresses endpoint URLs may name literally; the worker checks resolved ones when delivering. */
  addressPolicy: AddressPolicy;
  /** Largest data_json accepted, in bytes. */
  maxDataBytes: number;
  /** Endpoints one tenant may have (HOOKLINE_MAX_ENDPOINTS_PER_TENANT). */
  maxEndpointsPerTenant: number;
  now(): Date;
  /** Signs and checks portal links (HOOKLINE_PORTAL_KEY, or a random key per process). */
  portalKey: Buffer;
  generateSecret(): string;
  /** Told how many pending deliveries a call cancelled (DeleteEndpoint), for the metrics. */
  onCancelled?: (count: number) => void;
  /** Told when an endpoint appears or comes back, so that workers serve it at once. */
  onEndpointsChanged?: () => void;
  /** Whether the store answers now; gRPC health reports NOT_SERVING while it does not. */
  checkStore(): Promise<boolean>;
  log: Logger;
  /**
   * Aborted as the api starts to shut down: calls that work through a backlog a page at a time
   * (RecoverEndpoint, DeleteEndpoint) answer after their current page instead of being cut off.
   */
  stopping: AbortSignal;
  /** Commits an Emit; defaults to a group-committing batcher over `db`. */
  emitEvent?: (event: NewEvent) => Promise<EmitResult>;
}
