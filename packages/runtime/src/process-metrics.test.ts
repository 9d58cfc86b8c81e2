import assert from "node:assert/strict";
import { once } from "node:events";
import net from "node:net";
import { test } from "node:test";
import { loadConfig } from "@hookline/config";
import { HooklineMetrics } from "@hookline/metrics";
import { serveMetricsIfConfigured } from "./process-metrics.js";

test("a metrics address already in use stops the process with an error naming HOOKLINE_METRICS_ADDR", async () => {
  const taken = net.createServer().listen(0, "127.0.0.1");
  await once(taken, "listening");
  const { port } = taken.address() as net.AddressInfo;
  try {
    const config = loadConfig({ HOOKLINE_METRICS_ADDR: `127.0.0.1:${port}` });
    await assert.rejects(serveMetricsIfConfigured(config, new HooklineMetrics()), {
      message: `HOOKLINE_METRICS_ADDR 127.0.0.1:${port}: address in use`,
    });
  } finally {
    taken.close();
  }
});
