import { codeToString } from "@connectrpc/connect/protocol-connect";
import { coalescedLog, type Logger } from "@hookline/runtime";
import type { RefusalListener } from "./grpc-unary.js";

/**
 * Logs calls refused from their headers (no token, an unknown one, a link used out of bounds), so
 * that someone guessing tokens shows in the log and not only in a counter. A flood must not bury
 * the log: the first refusal of a quiet spell is logged as it comes, and those that follow within
 * the window are logged as one count when it ends. The reason is the text the caller was told; no
 * token ever appears in it.
 */
export function logRefusals(
  log: Logger,
  /** Runs fn after ms (tests pass their own, to end windows when they choose). */
  schedule?: (fn: () => void, ms: number) => void,
): RefusalListener {
  const warn = coalescedLog(
    (message, fields) => log.warn(message, fields),
    "call refused",
    "more calls refused",
    schedule,
  );
  return (method, error, peer) =>
    warn({ method, code: codeToString(error.code), reason: error.rawMessage, peer: peer ?? "" });
}
