import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";

const APPS = fileURLToPath(new URL("../../../apps/", import.meta.url));

/** A Hookline app started as its own process, from its built dist. */
export interface HooklineProcess {
  readonly child: ChildProcess;
  /** Everything it wrote to stderr (its JSON log lines). */
  readonly log: string[];
  /** The api address, for processes that serve one. */
  readonly address: string | undefined;
  /** The /metrics port, when HOOKLINE_METRICS_ADDR was set. */
  readonly metricsPort: number | undefined;
  /** SIGTERM, then waits for exit; resolves to the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL: a crash. */
  kill(): Promise<void>;
}

export type HooklineApp = "standalone" | "api" | "worker";

const READY: Record<HooklineApp, string> = {
  standalone: "hookline ready",
  api: "api listening",
  worker: "worker ready",
};

/**
 * Starts apps/<app>/dist/main.js with exactly env as its environment (nothing inherited, so a
 * variable exported in the caller's shell never changes what a test runs); resolves when ready.
 */
export async function spawnHookline(
  app: HooklineApp,
  env: Record<string, string>,
  { readyTimeoutMs = 60_000 }: { readyTimeoutMs?: number } = {},
): Promise<HooklineProcess> {
  const child = spawn(process.execPath, [`${APPS}${app}/dist/main.js`], {
    env,
    stdio: ["ignore", "inherit", "pipe"],
  });
  const log: string[] = [];
  let buffered = "";
  let address: string | undefined;
  let metricsPort: number | undefined;
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${app} not ready in ${readyTimeoutMs} ms:\n${log.join("")}`)),
      readyTimeoutMs,
    );
    child.stderr?.on("data", (chunk: Buffer) => {
      buffered += chunk.toString();
      let newline = buffered.indexOf("\n");
      while (newline >= 0) {
        const line = buffered.slice(0, newline + 1);
        buffered = buffered.slice(newline + 1);
        log.push(line);
        if (line.includes(READY[app])) {
          ({ address, metrics: metricsPort } = JSON.parse(line) as { address?: string; metrics?: number });
          clearTimeout(timer);
          resolve();
        }
        newline = buffered.indexOf("\n");
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${app} exited with ${code} before it was ready:\n${log.join("")}`));
    });
  });
  const exited = once(child, "exit").then(([code]) => code as number | null);
  await ready;
  return {
    child,
    log,
    get address() {
      return address;
    },
    get metricsPort() {
      return metricsPort;
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      return exited;
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    },
  };
}
