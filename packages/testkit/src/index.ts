export { createTestBackend, type TestBackend } from "./backend.js";
export { freshEmbeddedDataDir } from "./embedded-data-dir.js";
export { type LoadReceiver, type LoadReply, startLoadReceiver } from "./load-receiver.js";
export { type HooklineApp, type HooklineProcess, spawnHookline } from "./processes.js";
export { type CuttableProxy, startCuttableProxy, startDatabaseProxy } from "./proxy.js";
export { type ReceivedRequest, type Receiver, type ReceiverReply, startReceiver } from "./receiver.js";
export { readTestSettings, type TestBackendKind, type TestSettings } from "./settings.js";
export { type SlowReceiver, startSlowReceiver } from "./slow-receiver.js";
export { eventually } from "./wait.js";
