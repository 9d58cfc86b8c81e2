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
export {
  type ConsumerOptions,
  DeliveryConsumer,
  type DeliveryProcessor,
  type QueueDemand,
} from "./consumer.js";
export { openQueueHandle, openWorker } from "./handles.js";
export { rateWindow } from "./limits.js";
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
