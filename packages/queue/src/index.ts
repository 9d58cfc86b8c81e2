export {
  AdaptiveLimit,
  type AdaptiveLimitSettings,
  type LimitSample,
  type LoadSignal,
} from "./adaptive-limit.js";
export {
  openQueueBackend,
  type PostgresBackend,
  type QueueBackend,
  type QueueBackendOptions,
  type RedisBackend,
} from "./backend.js";
export { DeliveryConsumer } from "./consumer.js";
export type { ConsumerOptions, DeliveryProcessor, QueueDemand } from "./consumer-options.js";
export { openQueueHandle, openWorker } from "./handles.js";
export { type LimitsWrite, rateWindow } from "./limits.js";
export {
  DeliveryProducer,
  type EnqueueItem,
  type FedQueue,
  type ProducerOptions,
  QueueUnavailableError,
} from "./producer.js";
export {
  type DeliveryJobData,
  type EndpointRef,
  jobIdFor,
  type QueueLimits,
  QueueRouting,
} from "./routing.js";
export { closeWorker, type WorkerActivity, type WorkerCloseOutcome } from "./worker-close.js";
