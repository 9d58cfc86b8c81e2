/** A Hookline process's /metrics page (Prometheus's text format), from its metrics port. */
export async function readMetricsText(metricsPort: number): Promise<string> {
  const response = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
  if (!response.ok) throw new Error(`/metrics answered ${response.status}`);
  return response.text();
}
