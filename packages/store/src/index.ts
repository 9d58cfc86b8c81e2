export {
  type AttemptFilter,
  type AttemptRecord,
  type AttemptResult,
  listAttempts,
  recordAttempts,
} from "./attempts.js";
export { type ConnectOptions, connectStore, type StoreConnection, type StoreLocation } from "./connect.js";
export {
  cancelDeliveries,
  type DeliveryFilter,
  type DeliveryRecord,
  type DeliveryWork,
  findOverdueDeliveries,
  listDeliveries,
  listEndpointsToServe,
  loadDeliveryWork,
  type OverdueDelivery,
} from "./deliveries.js";
export {
  createEndpoint,
  deleteEndpoint,
  type EndpointPatch,
  type EndpointRecord,
  getEndpoint,
  listEndpoints,
  type NewEndpoint,
  updateEndpoint,
} from "./endpoints.js";
export {
  AlreadyExistsError,
  isConnectionError,
  NotFoundError,
  StoreUnavailableError,
} from "./errors.js";
export {
  type EmitResult,
  type EventRecord,
  emitEvent,
  getEvent,
  type NewEvent,
  type QueuedDelivery,
} from "./events.js";
export { deliveryIdFor, newId } from "./ids.js";
export { LOCK_KEYS, withTryLock } from "./locks.js";
export { CHANNELS, type Listener, listen, notify } from "./notifications.js";
export { InvalidPageTokenError } from "./page-token.js";
export type { Database, DeliveryStatusValue, EndpointStatusValue } from "./schema.js";
