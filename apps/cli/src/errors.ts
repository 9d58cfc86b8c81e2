import { Code, ConnectError } from "@connectrpc/connect";

/** A command line that cannot be run as written; main prints the message and the usage. */
export class UsageError extends Error {
  constructor(
    message: string,
    /** The command whose usage to print, e.g. "endpoints"; undefined for the overview. */
    readonly command?: string,
  ) {
    super(message);
    this.name = "UsageError";
  }
}

const NETWORK: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  ECONNRESET: "connection reset",
  ENOTFOUND: "host not found",
  EAI_AGAIN: "host name lookup failed",
  ETIMEDOUT: "connection timed out",
  EHOSTUNREACH: "host unreachable",
  ENETUNREACH: "network unreachable",
  EPIPE: "connection closed",
};

/** Why the service could not be reached ("connection refused"), or undefined for any other error. */
export function networkProblem(error: unknown): string | undefined {
  // connect-node reports a connection reset (ECONNRESET) as ABORTED, the rest as UNAVAILABLE.
  if (!(error instanceof ConnectError)) return undefined;
  if (error.code !== Code.Unavailable && error.code !== Code.Aborted) return undefined;
  const cause = error.cause as { code?: unknown } | undefined;
  return typeof cause?.code === "string" ? NETWORK[cause.code] : undefined;
}

/** connect's message for a call whose timeout ran out, on the client or in the api it reached. */
const OWN_DEADLINE_MESSAGE = "the operation timed out";

/** What a failed call's message names besides the error: where it went and what it carried. */
export interface CallSetting {
  /** The address as messages show it, with where it came from. */
  address: string;
  /** Where the token came from ("--token", "HOOKLINE_TOKEN"), undefined when none was sent. */
  tokenFrom?: string;
  /** How long a call waits for an answer, as the user would write it ("20s"). */
  waited: string;
}

/**
 * The one line a user sees for a failed call: the server's own message for the errors it explains
 * (NOT_FOUND, INVALID_ARGUMENT, ...), a plain sentence for a service out of reach.
 */
export function describeError(error: unknown, { address, tokenFrom, waited }: CallSetting): string {
  if (!(error instanceof ConnectError)) return error instanceof Error ? error.message : String(error);
  const problem = networkProblem(error);
  if (problem) return `cannot reach Hookline at ${address}: ${problem}`;
  switch (error.code) {
    case Code.NotFound:
    case Code.InvalidArgument:
    case Code.AlreadyExists:
    case Code.FailedPrecondition:
      return error.rawMessage;
    case Code.DeadlineExceeded:
      // The CLI's own deadline (connect's timer, or the api's echo of the timeout the call sent):
      // say how long it waited and how to wait longer. Any other message came from something
      // between (a proxy's own limit), which --timeout does not change: shown as it came.
      if (error.rawMessage === OWN_DEADLINE_MESSAGE)
        return `no answer from Hookline at ${address} within ${waited} (--timeout waits longer)`;
      return `deadline exceeded on the way to Hookline at ${address}: ${error.rawMessage}`;
    case Code.Unauthenticated:
      return tokenFrom === undefined
        ? `Hookline at ${address} needs a token: set HOOKLINE_TOKEN or pass --token (${error.rawMessage})`
        : `Hookline at ${address} refused the token from ${tokenFrom}: ${error.rawMessage}`;
    case Code.PermissionDenied:
      return tokenFrom === undefined
        ? `not allowed: ${error.rawMessage} (set HOOKLINE_TOKEN or pass --token)`
        : `not allowed with the token from ${tokenFrom}: ${error.rawMessage}`;
    case Code.Unimplemented:
      return `the server at ${address} does not support this yet: ${error.rawMessage}`;
    default:
      // "ResourceExhausted" reads as "resource exhausted".
      return `${Code[error.code].replace(/\B([A-Z])/g, " $1").toLowerCase()}: ${error.rawMessage}`;
  }
}
