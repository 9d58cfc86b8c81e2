import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import { type Health, HealthCheckResponse_ServingStatus as ServingStatus } from "@hookline/contracts";
import type { HealthMonitor } from "./health-monitor.js";
import type { HealthWatchSlots } from "./health-watch-slots.js";

/**
 * grpc.health.v1.Health for the whole server ("") and each named service. Every Hookline RPC needs
 * the store, so all of them are SERVING exactly while the store answers.
 */
export function healthService(
  monitor: HealthMonitor,
  services: readonly string[],
  watches: HealthWatchSlots,
): ServiceImpl<typeof Health> {
  const known = new Set(["", ...services]);
  const statusOf = (healthy: boolean) => (healthy ? ServingStatus.SERVING : ServingStatus.NOT_SERVING);
  return {
    async check(request) {
      if (!known.has(request.service)) {
        throw new ConnectError(`unknown service "${request.service}"`, Code.NotFound);
      }
      return { status: statusOf(await monitor.check()) };
    },
    async *watch(request, context) {
      const release = watches.acquire();
      try {
        if (!known.has(request.service)) {
          // The protocol keeps the call open: the service may become known later (it never does here).
          yield { status: ServingStatus.SERVICE_UNKNOWN };
          await new Promise<void>((resolve) => {
            if (context.signal.aborted) resolve();
            else context.signal.addEventListener("abort", () => resolve(), { once: true });
          });
          return;
        }
        for await (const healthy of monitor.watch(context.signal)) yield { status: statusOf(healthy) };
      } finally {
        release();
      }
    },
    async list() {
      const status = statusOf(await monitor.check());
      return { statuses: Object.fromEntries([...known].map((name) => [name, { status }])) };
    },
  };
}
