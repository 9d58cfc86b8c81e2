export { createTestBackend, type TestBackend, type TestBackendKind, testBackendKind } from "./backend.js";
export { type HooklineApp, type HooklineProcess, spawnHookline } from "./processes.js";
export { type CuttableProxy, startCuttableProxy, startDatabaseProxy } from "./proxy.js";
export { type ReceivedRequest, type Receiver, type ReceiverReply, startReceiver } from "./receiver.js";
export { eventually } from "./wait.js";
