const SERIES = "hookline_embedded_engine_busy_seconds_total";

/**
 * Seconds the embedded database's thread has been busy, from the process's /metrics; undefined
 * when the process runs none (servers).
 */
export async function readEngineBusySeconds(metricsPort: number): Promise<number | undefined> {
  const response = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
  if (!response.ok) throw new Error(`/metrics answered ${response.status}`);
  const line = (await response.text()).split("\n").find((row) => row.startsWith(`${SERIES} `));
  return line === undefined ? undefined : Number(line.slice(SERIES.length + 1));
}

/** Times a step and the embedded database's busy seconds over it: its share of one core, if any. */
export async function engineShareOver(
  metricsPort: number | undefined,
  step: () => Promise<void>,
): Promise<number | undefined> {
  const read = () => (metricsPort === undefined ? undefined : readEngineBusySeconds(metricsPort));
  const busyBefore = await read();
  const startedAt = performance.now();
  await step();
  const seconds = (performance.now() - startedAt) / 1000;
  const busyAfter = await read();
  if (busyBefore === undefined || busyAfter === undefined) return undefined;
  return (busyAfter - busyBefore) / seconds;
}
