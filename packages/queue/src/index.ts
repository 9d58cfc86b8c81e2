export { openQueueBackend, type QueueBackend, type QueueBackendOptions } from "./backend.js";
export {
  type ConsumerOptions,
  DeliveryConsumer,
  type DeliveryProcessor,
  type QueueDemand,
  rateWindow,
} from "./consumer.js";
export { DeliveryProducer, type EnqueueItem, type FedQueue, type ProducerOptions } from "./producer.js";
export {
  type DeliveryJobData,
  type EndpointRef,
  jobIdFor,
  type QueueLimits,
  QueueRouting,
} from "./routing.js";
