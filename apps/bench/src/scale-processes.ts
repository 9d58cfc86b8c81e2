import { writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Client, createClient } from "@connectrpc/connect";
import { createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";
import { AttemptLogService, EmitService, EndpointService } from "@hookline/contracts";
import { type HooklineApp, type HooklineProcess, spawnHookline } from "@hookline/testkit";
import { track } from "./children.js";
import type { BackendKind } from "./options.js";
import { log } from "./run-support.js";

/** Hookline running on one backend, and clients for its api. */
export interface ScaleProcesses {
  /** The process that consumes queues: the worker (servers) or the one embedded process. */
  consumerPid: number;
  /** Every process, by name, for the resource table. */
  pids: Record<string, number>;
  emit: Client<typeof EmitService>;
  endpoints: Client<typeof EndpointService>;
  attempts: Client<typeof AttemptLogService>;
  stop(): Promise<void>;
  /** Writes each process's log under the OS temp dir (after a failure) and says where. */
  saveLogs(): Promise<void>;
}

/** Starts standalone (embedded) or api then worker (servers) with env, and connects to the api. */
export async function startScaleProcesses(
  kind: BackendKind,
  env: Record<string, string>,
): Promise<ScaleProcesses> {
  const apps: HooklineApp[] = kind === "embedded" ? ["standalone"] : ["api", "worker"];
  const started: HooklineProcess[] = [];
  const stopAll = async () => {
    // Reverse order: the worker finishes its attempts before the api goes.
    for (const process of [...started].reverse()) await process.stop();
  };
  try {
    // One after the other: each process migrates the store on start.
    for (const app of apps) {
      const process = await spawnHookline(app, env, { readyTimeoutMs: 120_000 });
      track(process.child, () => process.stop());
      started.push(process);
    }
  } catch (error) {
    await stopAll();
    throw error;
  }
  const address = started[0]?.address;
  if (!address) throw new Error(`${apps[0]} did not report its address`);
  const manager = new Http2SessionManager(`http://${address}`);
  const transport = createGrpcTransport({ baseUrl: `http://${address}`, sessionManager: manager });
  const pids = Object.fromEntries(started.map((p, i) => [apps[i] ?? "app", p.child.pid ?? 0]));
  return {
    consumerPid: started.at(-1)?.child.pid ?? 0,
    pids,
    emit: createClient(EmitService, transport),
    endpoints: createClient(EndpointService, transport),
    attempts: createClient(AttemptLogService, transport),
    async stop() {
      manager.abort();
      await stopAll();
    },
    async saveLogs() {
      for (const process of started) {
        const path = join(tmpdir(), `hookline-bench-scale-${kind}-${process.child.pid}.log`);
        await writeFile(path, process.log.join(""));
        log(`log of ${kind} process ${process.child.pid}: ${path}`);
      }
    },
  };
}
