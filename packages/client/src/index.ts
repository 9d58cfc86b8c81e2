export {
  createHooklineClient,
  type HooklineClient,
  type HooklineClientOptions,
  toBaseUrl,
} from "./client.js";
export { type ReconnectInfo, type WatchOptions, type WatchRequest, watchAttempts } from "./watch.js";
