export { routes, startApiServer, type ApiServerOptions } from "./api.js";
export type { ApiDeps } from "./deps.js";
export type { ListeningServer } from "./server.js";
export { startApiFromConfig } from "./compose.js";
