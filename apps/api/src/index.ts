export { type ApiServerOptions, routes, startApiServer } from "./api.js";
export { type ApiServer, startApiFromConfig } from "./compose.js";
export type { ApiDeps } from "./deps.js";
export type { ListeningServer } from "./server.js";
