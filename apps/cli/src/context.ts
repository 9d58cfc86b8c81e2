import type { CallOptions } from "@connectrpc/connect";
import type { HooklineClient } from "@hookline/client";
import type { Invocation } from "./cli.js";

/** What a command runs with: the client, its parsed command line, and where its output goes. */
export interface Context {
  readonly client: HooklineClient;
  /** The one line to print for a failed call (names the address, and where the token came from). */
  describeError(error: unknown): string;
  readonly invocation: Invocation;
  /** JSON output asked for with --json. */
  readonly json: boolean;
  /** Cancelled on SIGINT / SIGTERM. */
  readonly signal: AbortSignal;
  /** Options for one unary call: bounded, and cancelled with the command. */
  readonly call: CallOptions;
  out(text: string): void;
  err(text: string): void;
  /** Everything piped to stdin, or undefined when stdin is a terminal. */
  readStdin(): Promise<string | undefined>;
  readonly stdoutIsTty: boolean;
}
