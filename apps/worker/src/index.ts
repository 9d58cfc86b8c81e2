export { startWorkerFromConfig } from "./compose.js";
export { envelopeOf } from "./envelope.js";
export { type RunningWorker, startWorker, type WorkerDeps } from "./worker.js";
