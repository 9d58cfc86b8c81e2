import { readMetricsText } from "./metrics-text.js";

const SERIES = "hookline_embedded_engine_busy_seconds_total";

/**
 * Seconds the embedded database's thread has been busy, from the process's /metrics; undefined
 * when the process runs none (servers) or has no metrics port to ask.
 */
export async function readEngineBusySeconds(metricsPort: number | undefined): Promise<number | undefined> {
  if (metricsPort === undefined) return undefined;
  const line = (await readMetricsText(metricsPort)).split("\n").find((row) => row.startsWith(`${SERIES} `));
  return line === undefined ? undefined : Number(line.slice(SERIES.length + 1));
}

/** Times a step and the embedded database's busy seconds over it: its share of one core, if any. */
export async function engineShareOver(
  metricsPort: number | undefined,
  step: () => Promise<void>,
): Promise<number | undefined> {
  const busyBefore = await readEngineBusySeconds(metricsPort);
  const startedAt = performance.now();
  await step();
  const seconds = (performance.now() - startedAt) / 1000;
  const busyAfter = await readEngineBusySeconds(metricsPort);
  if (busyBefore === undefined || busyAfter === undefined) return undefined;
  return (busyAfter - busyBefore) / seconds;
}
