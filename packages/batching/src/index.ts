export { Batcher } from "./batcher.js";
