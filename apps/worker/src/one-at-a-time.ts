/**
 * Runs a periodic job one at a time in this process. A timer tick while it runs (or waits to run)
 * is skipped, so a job slower than its interval never piles up copies, each holding a pooled
 * connection; a direct call waits its turn and then runs it afresh.
 */
export function oneAtATime<T>(job: () => Promise<T>): { run(): Promise<T>; tick(): Promise<T> | undefined } {
  let queue: Promise<unknown> = Promise.resolve();
  let pending = 0;
  const run = (): Promise<T> => {
    pending += 1;
    const next = queue.then(job).finally(() => {
      pending -= 1;
    });
    queue = next.catch(() => {});
    return next;
  };
  return { run, tick: () => (pending > 0 ? undefined : run()) };
}
