import type { DeliveryProducer } from "@hookline/queue";
import type { Database } from "@hookline/store";
import type { Kysely } from "kysely";

/** What the RPC handlers need; built once in the composition root. */
export interface ApiDeps {
  db: Kysely<Database>;
  producer: Pick<DeliveryProducer, "enqueue">;
  /** Largest data_json accepted, in bytes. */
  maxDataBytes: number;
  now(): Date;
  generateSecret(): string;
  /** Told when an endpoint appears or comes back, so an in-process worker can serve it at once. */
  onEndpointsChanged?: () => void;
  log(message: string, fields?: Record<string, unknown>): void;
}
