export { openQueueBackend, type QueueBackend, type QueueBackendOptions } from "./backend.js";
export { type ConsumerOptions, DeliveryConsumer, type DeliveryProcessor } from "./consumer.js";
export { type DeliveryJobData, jobIdFor, queueNameFor } from "./names.js";
export { DeliveryProducer, type EnqueueItem, type ProducerOptions } from "./producer.js";
