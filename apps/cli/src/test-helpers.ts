import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import {
  createTestBackend,
  type HooklineProcess,
  type Receiver,
  spawnHookline,
  startReceiver,
  type TestBackend,
  type TestSettings,
} from "@hookline/testkit";
import { run } from "./run.js";

const CLI = fileURLToPath(new URL("../dist/main.js", import.meta.url));

/** A standalone Hookline on a fresh backend, and a receiver for its webhooks. */
export interface RunningHookline {
  backend: TestBackend;
  /** Replaceable: a test that restarts the service puts the new process here. */
  service: HooklineProcess;
  receiver: Receiver;
  address: string;
  close(): Promise<void>;
}

/** How the receiver answers, and settings for the service beyond the test's defaults. */
export interface HooklineOptions {
  reply?: Parameters<typeof startReceiver>[0];
  env?: Record<string, string>;
}

export async function startHookline(
  settings: TestSettings,
  options: HooklineOptions = {},
): Promise<RunningHookline> {
  const backend = await createTestBackend(settings);
  const receiver = await startReceiver(options.reply);
  let service: HooklineProcess;
  try {
    service = await spawnHookline("standalone", {
      ...backend.env,
      HOOKLINE_API_ADDR: "127.0.0.1:0",
      HOOKLINE_QUEUE_POLL_INTERVAL: "20ms",
      ...options.env,
    });
  } catch (error) {
    await receiver.close();
    await backend.dispose();
    throw error;
  }
  const running: RunningHookline = {
    backend,
    service,
    receiver,
    address: service.address ?? "",
    async close() {
      // The current process: a test may have restarted the service.
      await running.service.stop();
      await receiver.close();
      await backend.dispose();
    },
  };
  return running;
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The CLI's environment: only what the test gives it decides the address and token. */
function cliEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const base = { ...process.env };
  delete base.HOOKLINE_ADDRESS;
  delete base.HOOKLINE_TOKEN;
  return { ...base, ...env };
}

/** Runs `hookline args...` to completion; `input` is piped to its stdin (else stdin is empty). */
export async function runCli(
  args: readonly string[],
  { env = {}, input }: { env?: Record<string, string>; input?: string } = {},
): Promise<CliResult> {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: cliEnv(env),
    stdio: ["pipe", "pipe", "pipe"],
  });
  child.stdin.end(input ?? "");
  const output = collect(child);
  const [code] = (await once(child, "close")) as [number | null];
  return { code, ...output };
}

/**
 * Runs a command line in this process, through the same `run` as the binary; `input` is its stdin
 * (else empty), and aborting `interrupted` (with the signal's name) is the user's Ctrl-C. For the
 * many calls that set a test up or check what a command did: a process each costs about half a
 * second of CPU. What only the binary does (its exit status, reading a piped stdin, signals) is
 * tested with runCli and startCli.
 */
export async function runCliInProcess(
  args: readonly string[],
  {
    env = {},
    input,
    interrupted = new AbortController().signal,
  }: { env?: Record<string, string>; input?: string; interrupted?: AbortSignal } = {},
): Promise<CliResult> {
  let stdout = "";
  let stderr = "";
  const code = await run(args, {
    env: cliEnv(env),
    out: (text) => {
      stdout += text;
    },
    err: (text) => {
      stderr += text;
    },
    readStdin: async () => input ?? "",
    stdoutIsTty: false,
    interrupted,
  });
  return { code, stdout, stderr };
}

/** A long-running `hookline` (tail): its output so far, and a way to wait for lines of it. */
export interface CliProcess {
  child: ChildProcess;
  readonly stdout: string;
  readonly stderr: string;
  /** Resolves with the stdout lines once there are at least n of them. */
  waitForLines(n: number, timeoutMs?: number): Promise<string[]>;
  /** Sends a signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export function startCli(args: readonly string[], env: Record<string, string>): CliProcess {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: cliEnv(env),
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output = collect(child);
  const closed = once(child, "close").then(([code]) => code as number | null);
  const lines = () => output.stdout.split("\n").filter((line) => line !== "");
  return {
    child,
    get stdout() {
      return output.stdout;
    },
    get stderr() {
      return output.stderr;
    },
    async waitForLines(n, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (lines().length < n) {
        if (Date.now() > deadline || child.exitCode !== null) {
          throw new Error(
            `saw ${lines().length} of ${n} lines:\n${output.stdout}\nstderr:\n${output.stderr}`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return lines();
    },
    async stop(signal = "SIGINT") {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return closed;
    },
  };
}

function collect(child: ChildProcess): { stdout: string; stderr: string } {
  const output = { stdout: "", stderr: "" };
  child.stdout?.on("data", (chunk: Buffer) => {
    output.stdout += chunk.toString();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    output.stderr += chunk.toString();
  });
  return output;
}
