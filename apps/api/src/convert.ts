import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  type Attempt,
  AttemptSchema,
  AttemptTrigger,
  type Delivery,
  DeliverySchema,
  DeliveryStatus,
  type Endpoint,
  EndpointSchema,
  EndpointStatus,
  type Event,
  EventSchema,
} from "@hookline/contracts";
import type {
  AttemptRecord,
  DeliveryRecord,
  DeliveryStatusValue,
  EndpointRecord,
  EventRecord,
} from "@hookline/store";
import { attemptIdFromStore } from "./attempt-id.js";

const DELIVERY_STATUS: Record<DeliveryStatusValue, DeliveryStatus> = {
  pending: DeliveryStatus.PENDING,
  delivered: DeliveryStatus.DELIVERED,
  failed: DeliveryStatus.FAILED,
  cancelled: DeliveryStatus.CANCELLED,
};

export function deliveryStatusValue(status: DeliveryStatus): DeliveryStatusValue | undefined {
  return (Object.keys(DELIVERY_STATUS) as DeliveryStatusValue[]).find(
    (key) => DELIVERY_STATUS[key] === status,
  );
}

export function endpointMessage(record: EndpointRecord, withSecret: boolean): Endpoint {
  return create(EndpointSchema, {
    id: record.id,
    tenantId: record.tenantId,
    url: record.url,
    description: record.description,
    eventTypes: record.eventTypes,
    status: record.status === "enabled" ? EndpointStatus.ENABLED : EndpointStatus.DISABLED,
    disabledReason: record.disabledReason,
    secret: withSecret ? record.secret : "",
    createdAt: timestampFromDate(record.createdAt),
    updatedAt: timestampFromDate(record.updatedAt),
    ...(record.maxInFlight !== null && { maxInFlight: record.maxInFlight }),
    ...(record.rateLimitPerSecond !== null && { rateLimitPerSecond: record.rateLimitPerSecond }),
  });
}

export function eventMessage(record: EventRecord): Event {
  return create(EventSchema, {
    id: record.id,
    tenantId: record.tenantId,
    eventType: record.eventType,
    dataJson: record.dataJson,
    createdAt: timestampFromDate(record.createdAt),
  });
}

export function deliveryMessage(record: DeliveryRecord): Delivery {
  return create(DeliverySchema, {
    id: record.id,
    tenantId: record.tenantId,
    eventId: record.eventId,
    endpointId: record.endpointId,
    status: DELIVERY_STATUS[record.status],
    attemptCount: record.attemptCount,
    ...(record.nextAttemptAt && { nextAttemptAt: timestampFromDate(record.nextAttemptAt) }),
    createdAt: timestampFromDate(record.createdAt),
  });
}

export function attemptMessage(record: AttemptRecord): Attempt {
  return create(AttemptSchema, {
    id: attemptIdFromStore(record.id),
    tenantId: record.tenantId,
    deliveryId: record.deliveryId,
    eventId: record.eventId,
    endpointId: record.endpointId,
    attemptNumber: record.attemptNumber,
    startedAt: timestampFromDate(record.startedAt),
    durationMs: record.durationMs,
    responseStatus: record.responseStatus,
    responseBody: record.responseBody,
    error: record.error,
    deliveryStatus: DELIVERY_STATUS[record.deliveryStatus],
    trigger: record.trigger === "manual" ? AttemptTrigger.MANUAL : AttemptTrigger.SCHEDULED,
    url: record.url ?? "",
  });
}
