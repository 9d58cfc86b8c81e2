export {
  type AttemptFilter,
  type AttemptRecord,
  type AttemptResult,
  attemptsAfter,
  lastAttemptId,
  listAttempts,
  matchesAttemptFilter,
  type RecordedAttempt,
  recordAttempts,
} from "./attempts.js";
export { connectStore, type StoreConnection, type StoreDb } from "./connect.js";
export { DataDirInUseError } from "./data-dir-lock.js";
export { DatabaseTimeoutError } from "./database-timeouts.js";
export {
  cancelDeliveries,
  type DeliveryFilter,
  type DeliveryRecord,
  getDelivery,
  listDeliveries,
  ownEndpointStatus,
  pendingByEndpoint,
  reopenDelivery,
} from "./deliveries.js";
export { type DeliveryWork, loadDeliveryWork } from "./delivery-work.js";
export {
  type EndpointWork,
  findEndpointsWithWork,
  findOverdueDeliveries,
  type OverdueDelivery,
  type OverduePosition,
} from "./due-deliveries.js";
export { type EmitResult, emitEvent, emitEvents, type NewEvent } from "./emit.js";
export {
  BACKLOG_PAGE,
  cancelPendingOf,
  type DeletedEndpoint,
  type FailedSince,
  type ReopenedPage,
  reopenFailedPage,
} from "./endpoint-backlog.js";
export {
  createEndpoint,
  deleteEndpoint,
  type EndpointPatch,
  type EndpointRecord,
  endpointLimits,
  findEndpoint,
  getEndpoint,
  listEndpoints,
  MAX_PREVIOUS_SECRETS,
  type NewEndpoint,
  rotateEndpointSecret,
  updateEndpoint,
} from "./endpoints.js";
export {
  AlreadyExistsError,
  isConnectionError,
  isConnectionLost,
  MigrationLockTimeoutError,
  NotFoundError,
  QuotaExceededError,
} from "./errors.js";
export { type EventRecord, getEvent } from "./events.js";
export { type ExclusiveJob, runExclusively } from "./exclusive-jobs.js";
export { deliveryIdFor, newId } from "./ids.js";
export { disableFailingEndpoints, purgeOlderThan, vacuumAnalyze } from "./maintenance.js";
export { InvalidPageTokenError } from "./page-token.js";
export { ping } from "./ping.js";
export type { DeliveryStatusValue } from "./schema.js";
export { StoredFunctionPrivilegeError } from "./stored-function.js";
