export { createTestBackend, type TestBackend, type TestBackendKind, testBackendKind } from "./backend.js";
