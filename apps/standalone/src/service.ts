import { type ApiServer, startApiFromConfig } from "@hookline/api";
import type { HooklineConfig } from "@hookline/config";
import { createSignal, type Infrastructure, type Logger, openInfrastructure } from "@hookline/runtime";
import { type RunningWorker, startWorkerFromConfig } from "@hookline/worker";

/** The api and a worker sharing one process, one store and one queue backend. */
export interface Service {
  readonly api: ApiServer;
  readonly worker: RunningWorker;
  readonly infra: Infrastructure;
  /** host:port of the api. */
  readonly address: string;
  close(): Promise<void>;
}

export async function startService(config: HooklineConfig, log: Logger): Promise<Service> {
  const infra = await openInfrastructure(config, log);
  let worker: RunningWorker | undefined;
  try {
    // In one process the worker tells the api's streams directly: PGlite has no cross-connection
    // NOTIFY, and in process it is quicker anyway.
    const attempts = createSignal();
    worker = await startWorkerFromConfig(config, infra, log, { onAttemptsRecorded: () => attempts.notify() });
    const running = worker;
    const api = await startApiFromConfig(config, infra, log, {
      attempts,
      onEndpointsChanged: () => {
        running.discover().catch((error: Error) => log.warn("discovery failed", { error: error.message }));
      },
    });
    let closed: Promise<void> | undefined;
    return {
      api,
      worker: running,
      infra,
      address: `${api.host}:${api.port}`,
      close() {
        // Stop taking calls, then let in-flight attempts finish, then release connections.
        closed ??= (async () => {
          await api.close();
          await running.close();
          await infra.close();
        })();
        return closed;
      },
    };
  } catch (error) {
    await worker?.close();
    await infra.close();
    throw error;
  }
}
