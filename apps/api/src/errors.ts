import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { BadRequestSchema } from "@hookline/contracts";
import { coalescedLog, type Logger } from "@hookline/runtime";
import { InvalidSecretError } from "@hookline/signing";
import {
  AlreadyExistsError,
  InvalidPageTokenError,
  isConnectionError,
  NotFoundError,
  QuotaExceededError,
} from "@hookline/store";
import { asInvalidBody } from "./invalid-body.js";
import { InvalidArgumentError } from "./validate.js";

type Warning = (fields: Record<string, unknown>) => void;
// Per logger, so per api process: in a database outage every call fails, and the log gets the
// first of them and then a count a minute, not a line per call.
const unavailableWarnings = new WeakMap<Logger, Warning>();

function warnUnavailable(log: Logger, fields: Record<string, unknown>): void {
  let warn = unavailableWarnings.get(log);
  if (!warn) {
    warn = coalescedLog(
      (message, fields) => log.warn(message, fields),
      "the database is unavailable; calls are answered UNAVAILABLE",
      "more calls answered UNAVAILABLE",
    );
    unavailableWarnings.set(log, warn);
  }
  warn(fields);
}

/**
 * The one place where domain errors become gRPC status codes. Clients see a message naming the
 * field or the row, never SQL or a stack; anything unexpected is logged and answered INTERNAL. A
 * database away is logged too (coalesced): a client's UNAVAILABLE should have a line to match.
 */
export function toConnectError(error: unknown, log: Logger, procedure?: string): ConnectError {
  if (error instanceof ConnectError) return asInvalidBody(error) ?? error;
  if (error instanceof InvalidArgumentError) return badRequest(error.field, error.message);
  if (error instanceof InvalidSecretError) return badRequest("secret", `secret ${error.reason}`);
  if (error instanceof InvalidPageTokenError) return badRequest("page_token", error.message);
  if (error instanceof NotFoundError) return new ConnectError(error.message, Code.NotFound);
  if (error instanceof AlreadyExistsError) return new ConnectError(error.message, Code.AlreadyExists);
  if (error instanceof QuotaExceededError) return new ConnectError(error.message, Code.ResourceExhausted);
  if (isConnectionError(error)) {
    warnUnavailable(log, {
      ...(procedure !== undefined && { procedure }),
      error: error instanceof Error ? error.message : String(error),
    });
    return new ConnectError("the database is unavailable; try again", Code.Unavailable);
  }
  log.error("internal error", {
    error: error instanceof Error ? (error.stack ?? error.message) : String(error),
  });
  return new ConnectError("internal error", Code.Internal);
}

/**
 * INVALID_ARGUMENT naming the field twice: in the message for people, and in a google.rpc.BadRequest
 * detail (grpc-status-details-bin on gRPC) for programs.
 */
function badRequest(field: string, message: string): ConnectError {
  return new ConnectError(message, Code.InvalidArgument, undefined, [
    { desc: BadRequestSchema, value: { fieldViolations: [{ field, description: message }] } },
  ]);
}

export function errorMappingInterceptor(log: Logger): Interceptor {
  return (next) => async (request) => {
    try {
      return await next(request);
    } catch (error) {
      throw toConnectError(error, log, request.method.name);
    }
  };
}
