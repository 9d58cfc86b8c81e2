import { readFile } from "node:fs/promises";
import { Worker } from "node:worker_threads";
import type { EngineMessage, EngineModules, EngineStart } from "./embedded-engine.js";

/** The embedded engine running on its own thread; stop() closes PGlite and ends the thread. */
export interface EngineThread {
  /**
   * Seconds the thread has been busy since it started (wall clock). It runs each statement to the
   * end inside one turn of its event loop (PGlite's WebAssembly is synchronous), so the loop's
   * active time is the time spent on statements and on serving the socket: near one second a
   * second, statements queue.
   */
  busySeconds(): number;
  stop(): Promise<void>;
}

// The build runs the thread from dist. This package's own tests run from its TypeScript sources
// through tsx, whose loader (on Node 20) does not reach worker threads: there the thread imports
// its source through tsx's API instead.
const FROM_SOURCE = import.meta.url.endsWith(".ts");
const ENTRY = new URL(FROM_SOURCE ? "./embedded-engine.ts" : "./embedded-engine.js", import.meta.url);
const SOURCE_BOOT = `import("tsx/esm/api").then(({ tsImport }) => tsImport(${JSON.stringify(ENTRY.href)}, ${JSON.stringify(import.meta.url)}))`;

// Node has WebAssembly; the project's lib (ES2023, no DOM) does not declare it.
declare const WebAssembly: {
  compile(bytes: Uint8Array): Promise<EngineModules["pgliteWasmModule"]>;
};

let modules: Promise<EngineModules> | undefined;

/**
 * PGlite's WebAssembly, compiled once per process and handed to each engine thread: a thread
 * compiling its own spent about two seconds of CPU on every store it opened.
 */
function engineModules(): Promise<EngineModules> {
  modules ??= (async () => {
    const dist = import.meta.resolve("@electric-sql/pglite");
    const compile = async (file: string) => WebAssembly.compile(await readFile(new URL(file, dist)));
    const [pgliteWasmModule, initdbWasmModule] = await Promise.all([
      compile("./pglite.wasm"),
      compile("./initdb.wasm"),
    ]);
    return { pgliteWasmModule, initdbWasmModule };
  })();
  modules.catch(() => {
    modules = undefined;
  });
  return modules;
}

/**
 * Starts PGlite on a worker thread, serving its socket at `socketPath`. Resolves once it listens;
 * rejects with the engine's own error when PGlite cannot open the data directory. Should the
 * thread die later, `onLost` hears why (the store's queries fail from then on).
 */
export async function startEngineThread(
  place: Omit<EngineStart, "modules">,
  onLost: (error: Error) => void,
): Promise<EngineThread> {
  const start: EngineStart = { ...place, modules: await engineModules() };
  const worker = FROM_SOURCE
    ? new Worker(SOURCE_BOOT, { eval: true, workerData: start })
    : new Worker(ENTRY, { workerData: start });
  let stopping = false;
  const stopped = new Promise<void>((resolve) => {
    worker.on("message", (message: EngineMessage) => {
      if (message.kind === "stopped") resolve();
    });
    worker.once("exit", () => resolve());
  });
  await new Promise<void>((resolve, reject) => {
    const early = (error: Error) => reject(error);
    const exited = (code: number) => reject(new Error(`the embedded engine thread exited with code ${code}`));
    worker.once("error", early);
    worker.once("exit", exited);
    worker.on("message", (message: EngineMessage) => {
      if (message.kind === "failed") reject(new Error(message.message));
      if (message.kind !== "ready") return;
      worker.off("error", early);
      worker.off("exit", exited);
      resolve();
    });
  }).catch(async (error: unknown) => {
    await worker.terminate();
    throw error;
  });
  worker.on("error", (error) => onLost(error));
  worker.on("exit", (code) => {
    if (!stopping) onLost(new Error(`the embedded engine thread exited with code ${code}`));
  });
  return {
    busySeconds: () => worker.performance.eventLoopUtilization().active / 1000,
    async stop() {
      if (stopping) return stopped;
      stopping = true;
      worker.postMessage("stop");
      await stopped;
      await worker.terminate();
    },
  };
}
