/**
 * Re-checks a condition until it holds, for state kept in a database that has no event to await.
 * Fails with the last value seen after timeoutMs.
 */
export async function eventually<T>(
  check: () => Promise<T>,
  done: (value: T) => boolean,
  { timeoutMs = 20_000, everyMs = 25 }: { timeoutMs?: number; everyMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (done(value)) return value;
    if (Date.now() > deadline)
      throw new Error(
        `condition not met in ${timeoutMs} ms; last value: ${JSON.stringify(value, (_k, v) => (typeof v === "bigint" ? String(v) : v))}`,
      );
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
