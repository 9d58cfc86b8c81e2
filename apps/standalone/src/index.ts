export { type Service, startService } from "./service.js";
