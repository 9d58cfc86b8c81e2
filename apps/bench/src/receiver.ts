import { type ChildProcess, fork } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { track } from "./children.js";
import type { ReceiverMessage, ReceiverReport, RequestTimes } from "./receiver-protocol.js";

type Counted = Extract<ReceiverReport, { type: "reached" | "counted" }>;

/** The receiver process, seen from the bench. */
export interface ReceiverHandle {
  readonly url: string;
  readonly pid: number;
  /** Forgets every request counted so far. */
  reset(): Promise<void>;
  count(): Promise<Counted>;
  /** Resolves when count requests have arrived since the last reset. */
  waitFor(count: number): Promise<Counted>;
  /** Fails each delivery's first `failures` requests with 500 from now on (0: plain 200s). */
  failFirst(failures: number): Promise<void>;
  /** Each delivery's request times since the last reset (fail-first mode only). */
  timeline(): Promise<RequestTimes[][]>;
  stop(): Promise<void>;
}

const SCRIPT = fileURLToPath(new URL("./receiver-process.js", import.meta.url));

/** Forks the receiver (a plain node:http server on 127.0.0.1) and waits until it listens. */
export async function startReceiverProcess(): Promise<ReceiverHandle> {
  const child: ChildProcess = fork(SCRIPT, [], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const exited = once(child, "exit");
  type Waiter = { resolve: (report: ReceiverReport) => void; reject: (error: Error) => void };
  const waiters = new Map<ReceiverReport["type"], Waiter[]>();
  child.on("message", (report: ReceiverReport) => waiters.get(report.type)?.shift()?.resolve(report));
  child.once("exit", (code, signal) => {
    const error = new Error(`the receiver process exited (${signal ?? code})`);
    for (const list of waiters.values()) for (const waiter of list.splice(0)) waiter.reject(error);
  });
  const next = <T extends ReceiverReport["type"]>(type: T) =>
    new Promise<Extract<ReceiverReport, { type: T }>>((resolve, reject) => {
      if (child.exitCode !== null || child.signalCode !== null) {
        reject(new Error("the receiver process is not running"));
        return;
      }
      const list = waiters.get(type) ?? [];
      waiters.set(type, list);
      list.push({ resolve: (report) => resolve(report as Extract<ReceiverReport, { type: T }>), reject });
    });
  const ask = (message: ReceiverMessage) => child.send(message);

  const forget = track(child, async () => {
    if (child.connected) child.disconnect();
    await exited;
  });
  const { port } = await next("listening");
  return {
    url: `http://127.0.0.1:${port}/hook`,
    pid: child.pid ?? 0,
    async reset() {
      const reply = next("counted");
      ask({ type: "reset" });
      await reply;
    },
    count() {
      const reply = next("counted");
      ask({ type: "count" });
      return reply;
    },
    waitFor(count) {
      const reply = next("reached");
      ask({ type: "expect", count });
      return reply;
    },
    async failFirst(failures) {
      const reply = next("counted");
      ask({ type: "fail-first", failures });
      await reply;
    },
    async timeline() {
      const reply = next("timeline");
      ask({ type: "timeline" });
      return (await reply).deliveries;
    },
    async stop() {
      forget();
      if (child.connected) child.disconnect();
      if (child.exitCode === null) await exited;
    },
  };
}
