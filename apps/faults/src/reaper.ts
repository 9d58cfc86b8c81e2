const reapers = new Set<() => void>();
let installed = false;

/**
 * Registers a synchronous cleanup for when this test process ends before disposing of what it
 * started (a test timeout, SIGTERM from CI): servers and Hookline processes must not outlive it.
 * Returns the function that unregisters it.
 */
export function reapOnExit(reap: () => void): () => void {
  if (!installed) {
    installed = true;
    process.once("exit", () => {
      for (const fn of reapers) {
        try {
          fn();
        } catch {
          // Best effort: the process is going away.
        }
      }
    });
    // Without a handler these signals end the process without running exit handlers.
    for (const signal of ["SIGTERM", "SIGINT"] as const) process.once(signal, () => process.exit(130));
  }
  reapers.add(reap);
  return () => reapers.delete(reap);
}
