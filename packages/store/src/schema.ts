import type { ColumnType } from "kysely";

// Status values stored as text so that SQL, logs and psql sessions read plainly.
export type EndpointStatusValue = "enabled" | "disabled";
export type DeliveryStatusValue = "pending" | "delivered" | "failed" | "cancelled";
export type AttemptTriggerValue = "scheduled" | "manual";

type Timestamp = ColumnType<Date, Date | string, Date | string>;
/** Database-assigned bigserial columns: read as strings (pg does not narrow int8), never written. */
type Serial = ColumnType<string, never, never>;

export interface EndpointTable {
  tenant_id: string;
  id: string;
  seq: Serial;
  url: string;
  description: string;
  event_types: string[];
  status: EndpointStatusValue;
  disabled_reason: string;
  secret: string;
  /** Retired secrets still signing until they expire: [{ secret, since, expires_at }]. */
  previous_secrets: ColumnType<PreviousSecret[], string | undefined, string>;
  /**
   * When `secret` started signing: its last rotation. Null until the first rotation after this
   * column was added; read as created_at then, which is wrong only for endpoints rotated before.
   */
  secret_since: ColumnType<Date | null, never, Date>;
  failing_since: ColumnType<Date | null, Date | null | undefined, Date | null>;
  max_in_flight: ColumnType<number | null, number | null | undefined, number | null>;
  rate_limit_per_second: ColumnType<number | null, number | null | undefined, number | null>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface PreviousSecret {
  secret: string;
  /** When it started signing; absent on secrets retired before this was kept. */
  since?: string;
  expires_at: string;
}

export interface EventTable {
  tenant_id: string;
  id: string;
  seq: Serial;
  event_type: string;
  data_json: string;
  created_at: Timestamp;
}

export interface DeliveryTable {
  id: string;
  seq: Serial;
  tenant_id: string;
  event_id: string;
  endpoint_id: string;
  status: DeliveryStatusValue;
  attempt_count: number;
  next_attempt_at: Timestamp | null;
  /** The pending attempt was asked for by hand: one attempt, no new retry schedule. */
  next_attempt_manual: ColumnType<boolean, boolean | undefined, boolean>;
  /**
   * The seq of the endpoint row it was made for: a new endpoint that takes a deleted one's id has
   * another. Null on deliveries made before the column (they match their endpoint by id alone).
   */
  endpoint_seq: ColumnType<string | null, never, never>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface AttemptTable {
  id: Serial;
  tenant_id: string;
  delivery_id: string;
  event_id: string;
  endpoint_id: string;
  attempt_number: number;
  started_at: Timestamp;
  duration_ms: number;
  response_status: number;
  response_body: string;
  error: string;
  delivery_status: DeliveryStatusValue;
  trigger: ColumnType<AttemptTriggerValue, AttemptTriggerValue | undefined, AttemptTriggerValue>;
  /** Null for attempts recorded before migration 0008. */
  url: ColumnType<string | null, string | undefined, string>;
}

export interface Database {
  endpoints: EndpointTable;
  events: EventTable;
  deliveries: DeliveryTable;
  attempts: AttemptTable;
}

/** Hookline's tables live in their own schema, beside BullMQ's. */
export const STORE_SCHEMA = "hookline";
