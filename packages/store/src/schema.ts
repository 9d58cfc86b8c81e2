import type { ColumnType } from "kysely";

// Status values stored as text so that SQL, logs and psql sessions read plainly.
export type EndpointStatusValue = "enabled" | "disabled";
export type DeliveryStatusValue = "pending" | "delivered" | "failed" | "cancelled";

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
  created_at: Timestamp;
  updated_at: Timestamp;
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
}

export interface Database {
  endpoints: EndpointTable;
  events: EventTable;
  deliveries: DeliveryTable;
  attempts: AttemptTable;
}

/** Hookline's tables live in their own schema, beside BullMQ's. */
export const STORE_SCHEMA = "hookline";
