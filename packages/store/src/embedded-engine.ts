import { chmod, rm } from "node:fs/promises";
import { parentPort, workerData } from "node:worker_threads";
import { PGlite, type PGliteOptions } from "@electric-sql/pglite";
import { PGliteServer } from "./pglite-server.js";

/** What the main thread asks of the engine thread. */
export interface EngineStart {
  dataDir: string | null;
  socketPath: string;
  /** PGlite's compiled WebAssembly, shared by every engine thread of the process. */
  modules: EngineModules;
}

/** Compiling these takes seconds of CPU; a process does it once (see embedded-engine-thread.ts). */
export interface EngineModules {
  pgliteWasmModule: NonNullable<PGliteOptions["pgliteWasmModule"]>;
  initdbWasmModule: NonNullable<PGliteOptions["initdbWasmModule"]>;
}

/** What the engine thread tells the main thread. */
export type EngineMessage = { kind: "ready" } | { kind: "failed"; message: string } | { kind: "stopped" };

/**
 * The embedded PostgreSQL engine's thread: PGlite and the socket server that serves it. PGlite
 * runs its SQL (WebAssembly) on the thread that owns it; here that is a thread of its own, so
 * the store's work runs on a second core while the main thread serves RPCs and delivers.
 */
async function run(start: EngineStart): Promise<void> {
  const port = parentPort;
  if (!port) throw new Error("embedded-engine runs as a worker thread");
  const tell = (message: EngineMessage) => port.postMessage(message);
  let pglite: PGlite | undefined;
  let server: PGliteServer | undefined;
  try {
    pglite = await PGlite.create({
      ...start.modules,
      ...(start.dataDir !== null && { dataDir: start.dataDir }),
    });
    // The socket ignores startup options, so BullMQ's search_path is set once for the shared session.
    await pglite.exec("SET search_path TO bullmq, public");
    server = new PGliteServer(pglite);
    // A socket file left by a process that was killed would make listen fail with EADDRINUSE.
    await rm(start.socketPath, { force: true });
    await server.listen(start.socketPath);
    await chmod(start.socketPath, 0o600);
  } catch (error) {
    // Whatever opened is closed, so a data directory is left consistent for the next start.
    await server?.close().catch(() => {});
    await pglite?.close().catch(() => {});
    tell({ kind: "failed", message: error instanceof Error ? error.message : String(error) });
    return;
  }
  const opened = { pglite, server };
  let stop: (() => Promise<void>) | undefined = async () => {
    await opened.server.close();
    await opened.pglite.close();
  };
  port.on("message", (message: "stop") => {
    if (message !== "stop") return;
    const finish = stop ?? (async () => {});
    stop = undefined;
    finish().finally(() => {
      tell({ kind: "stopped" });
      port.close();
    });
  });
  tell({ kind: "ready" });
}

if (parentPort) void run(workerData as EngineStart);
