import type { ChildProcess } from "node:child_process";

/** A process the bench started, and how to stop it politely. */
interface Tracked {
  child: ChildProcess;
  stop(): Promise<unknown>;
}

const tracked = new Set<Tracked>();

/** Remembers a child so it is stopped however the bench ends; returns a function that forgets it. */
export function track(child: ChildProcess, stop: () => Promise<unknown>): () => void {
  const entry = { child, stop };
  tracked.add(entry);
  return () => tracked.delete(entry);
}

/** Stops every tracked child (SIGTERM and wait, SIGKILL after graceMs). */
export async function stopAll(graceMs = 20_000): Promise<void> {
  await Promise.all(
    [...tracked].map(async (entry) => {
      const timer = setTimeout(() => entry.child.kill("SIGKILL"), graceMs);
      try {
        await entry.stop();
      } catch {
        entry.child.kill("SIGKILL");
      } finally {
        clearTimeout(timer);
        // Forgotten only once gone, so the exit handler still kills a child whose stop never ended.
        tracked.delete(entry);
      }
    }),
  );
}

/** Last resort on exit: nothing asynchronous can run, so kill what is still alive. */
function killRemaining(): void {
  for (const { child } of tracked) {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  }
}

/** Installs the handlers that stop children on Ctrl-C, SIGTERM, a stray rejection, and exit. */
export function stopChildrenOnExit(): void {
  process.on("exit", killRemaining);
  process.on("unhandledRejection", (reason) => {
    process.stderr.write(`bench failed: ${reason instanceof Error ? reason.message : String(reason)}\n`);
    stopAll(5_000).finally(() => process.exit(1));
  });
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => {
      process.stderr.write(`\n${signal}: stopping child processes\n`);
      stopAll(5_000).finally(() => process.exit(130));
    });
  }
}

/** Rejects with message if work has not settled within ms. */
export async function withDeadline<T>(work: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
