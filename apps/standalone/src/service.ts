import { type ListeningServer, startApiFromConfig } from "@hookline/api";
import type { HooklineConfig } from "@hookline/config";
import { type Infrastructure, type Logger, openInfrastructure } from "@hookline/runtime";
import { type RunningWorker, startWorkerFromConfig } from "@hookline/worker";

/** The api and a worker sharing one process, one store and one queue backend. */
export interface Service {
  readonly api: ListeningServer;
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
    worker = await startWorkerFromConfig(config, infra, log);
    const running = worker;
    const api = await startApiFromConfig(config, infra, log, () => {
      running.discover().catch((error: Error) => log.warn("discovery failed", { error: error.message }));
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
