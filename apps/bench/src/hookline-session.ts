import { writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Client, createClient } from "@connectrpc/connect";
import { createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";
import { AttemptLogService, EmitService, EndpointService } from "@hookline/contracts";
import {
  createTestBackend,
  type HooklineApp,
  type HooklineProcess,
  spawnHookline,
  type TestSettings,
} from "@hookline/testkit";
import { track } from "./children.js";
import type { CpuTargets } from "./cpu.js";
import { hooklineCpuTargets } from "./cpu-targets.js";
import type { EmitClient } from "./emit-load.js";
import { createGrpcEmitter, type GrpcEmitter } from "./grpc-emit.js";
import type { BackendKind, BenchOptions } from "./options.js";
import type { ReceiverHandle } from "./receiver.js";
import { log, processEnv } from "./run-support.js";

/** Hookline started on a fresh backend with endpoints on the receiver, for the latency sections. */
export interface HooklineSession {
  readonly tenantId: string;
  /** Emit over grpc-js (the load sections' producer: see grpc-emit.ts); GetEvent over Connect. */
  readonly emit: EmitClient;
  readonly attemptLog: Client<typeof AttemptLogService>;
  /** Hookline's processes by app name, the receiver, the bench, the shared servers and the machine. */
  readonly cpuTargets: CpuTargets;
  /** The running processes, first started first. */
  readonly processes: readonly HooklineProcess[];
  /** The servers backend's database (undefined embedded). */
  readonly databaseUrl: string | undefined;
  /** Stops the processes now, the worker before the api (the backend stays until close). */
  stopProcesses(): Promise<void>;
  /** Stops the processes (saving their logs under the temp dir if failed) and drops the backend. */
  close(failed?: boolean): Promise<void>;
}

const TENANT = "bench";

/** Starts Hookline as real processes (standalone, or api + worker) with `extraEnv(app)` on top of the bench's. */
export async function startHooklineSession(
  settings: TestSettings,
  kind: BackendKind,
  options: BenchOptions,
  receiver: ReceiverHandle,
  extraEnv: (app: HooklineApp) => Record<string, string> = () => ({}),
): Promise<HooklineSession> {
  const backend = await createTestBackend(settings, kind);
  const processes: HooklineProcess[] = [];
  let manager: Http2SessionManager | undefined;
  let emitter: GrpcEmitter | undefined;
  // Reverse order: the worker finishes its attempts before the api goes.
  const stopProcesses = async () => {
    for (const started of processes.reverse().splice(0)) await started.stop();
  };
  const close = async (failed = false) => {
    manager?.abort();
    emitter?.close();
    if (failed)
      for (const started of processes) {
        const path = join(tmpdir(), `hookline-bench-${kind}-${started.child.pid}.log`);
        await writeFile(path, started.log.join(""));
        log(`log of ${kind} process ${started.child.pid}: ${path}`);
      }
    await stopProcesses();
    await backend.dispose();
  };
  try {
    const env = processEnv(backend.env, options);
    const apps: HooklineApp[] = kind === "embedded" ? ["standalone"] : ["api", "worker"];
    // One after the other: each process migrates the store on start.
    for (const app of apps) {
      const started = await spawnHookline(app, { ...env, ...extraEnv(app) }, { readyTimeoutMs: 120_000 });
      track(started.child, () => started.stop());
      processes.push(started);
    }
    const address = processes[0]?.address;
    if (!address) throw new Error(`${apps[0]} did not report its address`);
    log(
      `${apps.join(" + ")} ready at ${address} (${kind === "embedded" ? "PGlite + BullMQ on PGlite" : "PostgreSQL + Redis"})`,
    );
    manager = new Http2SessionManager(`http://${address}`);
    emitter = createGrpcEmitter(address);
    const transport = createGrpcTransport({ baseUrl: `http://${address}`, sessionManager: manager });
    const endpoints = createClient(EndpointService, transport);
    for (let i = 0; i < options.endpoints; i++) {
      await endpoints.createEndpoint({ tenantId: TENANT, id: `ep-${i}`, url: `${receiver.url}/${i}` });
    }
    const cpuTargets = hooklineCpuTargets(
      kind,
      apps,
      processes.map((p) => p.child.pid),
      receiver.pid,
    );
    return {
      tenantId: TENANT,
      cpuTargets,
      processes,
      databaseUrl: backend.databaseUrl,
      stopProcesses,
      emit: { emit: emitter.emit, getEvent: createClient(EmitService, transport).getEvent },
      attemptLog: createClient(AttemptLogService, transport),
      close,
    };
  } catch (error) {
    await close(true);
    throw error;
  }
}
