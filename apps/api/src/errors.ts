import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { BadRequestSchema } from "@hookline/contracts";
import type { Logger } from "@hookline/runtime";
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

/**
 * The one place where domain errors become gRPC status codes. Clients see a message naming the
 * field or the row, never SQL or a stack; anything unexpected is logged and answered INTERNAL.
 */
export function toConnectError(error: unknown, log: Logger): ConnectError {
  if (error instanceof ConnectError) return asInvalidBody(error) ?? error;
  if (error instanceof InvalidArgumentError) return badRequest(error.field, error.message);
  if (error instanceof InvalidSecretError) return badRequest("secret", `secret ${error.reason}`);
  if (error instanceof InvalidPageTokenError) return badRequest("page_token", error.message);
  if (error instanceof NotFoundError) return new ConnectError(error.message, Code.NotFound);
  if (error instanceof AlreadyExistsError) return new ConnectError(error.message, Code.AlreadyExists);
  if (error instanceof QuotaExceededError) return new ConnectError(error.message, Code.ResourceExhausted);
  if (isConnectionError(error))
    return new ConnectError("the database is unavailable; try again", Code.Unavailable);
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
      throw toConnectError(error, log);
    }
  };
}
