import { createHooklineClient, type HooklineClient } from "@hookline/client";
import { attemptsListCommand } from "./attempts.js";
import { type Invocation, parseCommandLine, usage } from "./cli.js";
import type { Context } from "./context.js";
import { deliveriesCommand } from "./deliveries.js";
import { endpointsCommand } from "./endpoints.js";
import { describeError, UsageError } from "./errors.js";
import { emitCommand, eventShowCommand } from "./events.js";
import { portalLinkCommand } from "./portal.js";
import { tailCommand } from "./tail.js";
import { terminalSafe } from "./terminal-safe.js";
import { timeoutOption } from "./times.js";

export const DEFAULT_ADDRESS = "127.0.0.1:50051";
/** How long a call waits for an answer unless --timeout says otherwise. */
const CALL_TIMEOUT = "20s";

/** Where the CLI reads and writes; main passes the real process streams. */
export interface Io {
  env: NodeJS.ProcessEnv;
  out(text: string): void;
  err(text: string): void;
  readStdin(): Promise<string | undefined>;
  stdoutIsTty: boolean;
  /** Aborted, with the signal's name as its reason, when the user interrupts the command. */
  interrupted: AbortSignal;
}

/**
 * Runs one command line; resolves to the exit status: 0 ok (also tail ended by an interrupt), 1 the
 * call failed, 2 usage error, 130 interrupted by SIGINT, 143 by SIGTERM.
 */
export async function run(argv: readonly string[], io: Io): Promise<number> {
  let invocation: Invocation;
  let client: HooklineClient | undefined;
  let address = DEFAULT_ADDRESS;
  /** The address as messages show it: with where it came from, unless the command line gave it. */
  let shownAddress = address;
  let token: string | undefined;
  let tokenFrom: string | undefined;
  let waited = CALL_TIMEOUT;
  try {
    invocation = parseCommandLine(argv);
    if (invocation.values.help || invocation.command === undefined) {
      // Bare `hookline` is a usage error; asking for help is not.
      (argv.length === 0 ? io.err : io.out)(usage(invocation.command));
      return argv.length === 0 ? 2 : 0;
    }
    const { values } = invocation;
    address = values.address ?? (io.env.HOOKLINE_ADDRESS || DEFAULT_ADDRESS);
    // Where the address came from, so that a wrong one is traced to what set it.
    const addressFrom =
      values.address !== undefined ? "--address" : io.env.HOOKLINE_ADDRESS ? "HOOKLINE_ADDRESS" : undefined;
    const transport = values.transport ?? "grpc";
    if (transport !== "grpc" && transport !== "connect") {
      throw new UsageError(`--transport must be grpc or connect, not "${transport}"`);
    }
    waited = values.timeout?.trim() ?? CALL_TIMEOUT;
    const timeoutMs = timeoutOption(waited);
    ({ token, tokenFrom } = tokenOf(values.token, io.env.HOOKLINE_TOKEN));
    try {
      client = createHooklineClient({ address, token, transport });
    } catch (error) {
      throw new UsageError(
        `${addressFrom ?? "the default address"}: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    shownAddress =
      addressFrom === "--address"
        ? address
        : addressFrom === "HOOKLINE_ADDRESS"
          ? `${address} (HOOKLINE_ADDRESS)`
          : `${address} (the default; set HOOKLINE_ADDRESS or pass --address)`;
    const ctx: Context = {
      client,
      describeError: (error) => describeError(error, { address: shownAddress, tokenFrom, waited }),
      invocation,
      json: values.json === true,
      signal: io.interrupted,
      call: { timeoutMs, signal: io.interrupted },
      out: (text) => io.out(terminalSafe(text)),
      err: (text) => io.err(terminalSafe(text)),
      readStdin: io.readStdin,
      stdoutIsTty: io.stdoutIsTty,
    };
    await dispatch(ctx);
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`hookline: ${error.message}\n\n${usage(error.command)}`);
      return 2;
    }
    if (io.interrupted.aborted) return interruptedStatus(io.interrupted.reason);
    io.err(terminalSafe(`hookline: ${describeError(error, { address: shownAddress, tokenFrom, waited })}\n`));
    return 1;
  } finally {
    client?.close();
  }
}

/** The shell's status for a process ended by a signal: 128 + its number (SIGTERM 143, else SIGINT 130). */
export function interruptedStatus(signal: unknown): number {
  return signal === "SIGTERM" ? 143 : 130;
}

/**
 * The token to send, and where it came from (for messages; the token itself is never printed).
 * Surrounding whitespace (a token read from a file) is dropped; a token with whitespace or
 * control characters inside could not have been issued, and would reach the api garbled.
 */
function tokenOf(
  flag: string | undefined,
  env: string | undefined,
): { token: string | undefined; tokenFrom: string | undefined } {
  const tokenFrom = flag !== undefined ? "--token" : env ? "HOOKLINE_TOKEN" : undefined;
  const token = (flag ?? env)?.trim();
  if (tokenFrom === undefined) return { token: undefined, tokenFrom };
  if (!token) throw new UsageError(`${tokenFrom} is empty`);
  if (!/^[\x21-\x7e]+$/.test(token)) {
    throw new UsageError(
      `${tokenFrom} holds whitespace, a control character or a non-ASCII character; an API token is one word of printable ASCII`,
    );
  }
  return { token, tokenFrom };
}

function dispatch(ctx: Context): Promise<void> {
  const command = ctx.invocation.command ?? "";
  if (command.startsWith("endpoints ")) return endpointsCommand(ctx);
  if (command.startsWith("deliveries ")) return deliveriesCommand(ctx);
  switch (command) {
    case "emit":
      return emitCommand(ctx);
    case "event show":
      return eventShowCommand(ctx);
    case "attempts list":
      return attemptsListCommand(ctx);
    case "portal link":
      return portalLinkCommand(ctx);
    case "tail":
      return tailCommand(ctx);
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}
