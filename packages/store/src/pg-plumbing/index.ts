// PostgreSQL plumbing beneath the store's domain calls, published as @hookline/store/pg-plumbing:
// NOTIFY/LISTEN between processes (the runtime's change signals stand on it). The advisory locks
// beside it stay inside the store, which offers runExclusively instead.
export { type Listener, listen, notify } from "./notifications.js";
