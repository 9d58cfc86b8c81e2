export {
  type AttemptFilter,
  type AttemptRecord,
  type AttemptResult,
  attemptsAfter,
  lastAttemptId,
  listAttempts,
  listAttemptsAfter,
  matchesAttemptFilter,
  recordAttempts,
} from "./attempts.js";
export { type ConnectOptions, connectStore, type StoreConnection, type StoreLocation } from "./connect.js";
export {
  cancelDeliveries,
  type DeliveryFilter,
  type DeliveryRecord,
  type DeliveryWork,
  type EndpointWork,
  findEndpointsWithWork,
  findOverdueDeliveries,
  getDelivery,
  listDeliveries,
  loadDeliveryWork,
  type OverdueDelivery,
  pendingByEndpoint,
  type ReopenTarget,
  reopenDeliveries,
} from "./deliveries.js";
export { type EmitResult, emitEvent, emitEvents, type NewEvent, type QueuedDelivery } from "./emit.js";
export {
  createEndpoint,
  deleteEndpoint,
  type EndpointPatch,
  type EndpointRecord,
  endpointLimits,
  getEndpoint,
  listEndpoints,
  type NewEndpoint,
  rotateEndpointSecret,
  updateEndpoint,
} from "./endpoints.js";
export {
  AlreadyExistsError,
  isConnectionError,
  NotFoundError,
  QuotaExceededError,
  StoreUnavailableError,
} from "./errors.js";
export { type EventRecord, getEvent } from "./events.js";
export { deliveryIdFor, newId } from "./ids.js";
export { LOCK_KEYS, withTryLock } from "./locks.js";
export { disableFailingEndpoints, purgeOlderThan, vacuumAnalyze } from "./maintenance.js";
export { CHANNELS, type Listener, listen, notify } from "./notifications.js";
export { InvalidPageTokenError } from "./page-token.js";
export { ping } from "./ping.js";
export type { AttemptTriggerValue, Database, DeliveryStatusValue, EndpointStatusValue } from "./schema.js";
