import http from "node:http";
import type net from "node:net";
import type { Infrastructure } from "@hookline/runtime";
import { ping } from "@hookline/store";

/** Named readiness checks; each resolves true when its dependency answers. */
export type ReadinessChecks = Record<string, () => Promise<boolean>>;

export interface HealthServer {
  readonly host: string;
  readonly port: number;
  close(): Promise<void>;
}

export interface HealthServerOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** Undefined while the worker is still starting: /readyz answers 503 until it is set. */
  readiness(): ReadinessChecks | undefined;
  /** A check slower than this counts as failed (Kubernetes gives a probe 1 s by default). */
  timeoutMs?: number;
}

/**
 * A tiny HTTP server for orchestrators: /healthz answers 200 while the process runs (liveness),
 * /readyz 200 only when every readiness check passes, else 503 naming the failing ones.
 */
export async function startHealthServer(options: HealthServerOptions): Promise<HealthServer> {
  const timeoutMs = options.timeoutMs ?? 800;
  const server = http.createServer((request, response) => {
    const reply = (status: number, body: object) => {
      response.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" });
      response.end(request.method === "HEAD" ? undefined : `${JSON.stringify(body)}\n`);
    };
    if (request.method !== "GET" && request.method !== "HEAD") return reply(405, { error: "use GET" });
    const path = (request.url ?? "/").split("?")[0];
    if (path === "/healthz") return reply(200, { status: "ok" });
    if (path !== "/readyz") return reply(404, { error: "try /healthz or /readyz" });
    const checks = options.readiness();
    if (!checks) return reply(503, { status: "starting" });
    runChecks(checks, timeoutMs).then(
      (results) => {
        const ready = Object.values(results).every(Boolean);
        reply(ready ? 200 : 503, { status: ready ? "ready" : "not ready", checks: results });
      },
      () => reply(503, { status: "not ready" }),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const { port } = server.address() as net.AddressInfo;
  return {
    host: options.host,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function runChecks(checks: ReadinessChecks, timeoutMs: number): Promise<Record<string, boolean>> {
  const entries = await Promise.all(
    Object.entries(checks).map(async ([name, check]) => {
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), timeoutMs);
      });
      const passed = await Promise.race([check().catch(() => false), timedOut]);
      clearTimeout(timer);
      return [name, passed] as const;
    }),
  );
  return Object.fromEntries(entries);
}

/** What a worker needs to do its job: the store answers, and the queue backend is connected. */
export function workerReadiness(infra: Infrastructure): ReadinessChecks {
  return {
    store: () => ping(infra.store.db),
    queue: () => infra.queueBackend.ping(),
  };
}
