import { fork } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { track } from "./children.js";
import type {
  ScaleReceiverListening,
  ScaleReceiverReply,
  ScaleReceiverRequest,
} from "./scale-receiver-protocol.js";

/** The scale receiver process, seen from the bench. */
export interface ScaleReceiver {
  readonly pid: number;
  /** The URL of a group's path: "ok", "hang", or "slow/<ms>". */
  url(group: string, mode?: string): string;
  reset(): Promise<void>;
  /** Arrival times (epoch ms) of the group's requests since the last reset. */
  times(group: string): Promise<number[]>;
  /** Resolves when the group has counted count requests since the last reset. */
  waitFor(group: string, count: number): Promise<void>;
  probes(): Promise<Record<string, number>>;
}

type Request = ScaleReceiverRequest extends infer R
  ? R extends { id: number }
    ? Omit<R, "id">
    : never
  : never;

const SCRIPT = fileURLToPath(new URL("./scale-receiver-process.js", import.meta.url));

/** Forks the scale receiver (node:http on 127.0.0.1) and waits until it listens. */
export async function startScaleReceiver(): Promise<ScaleReceiver> {
  const child = fork(SCRIPT, [], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const exited = once(child, "exit");
  const pending = new Map<number, { resolve: (r: ScaleReceiverReply) => void; reject: (e: Error) => void }>();
  let listening: (port: number) => void = () => {};
  const port = new Promise<number>((resolve) => {
    listening = resolve;
  });
  child.on("message", (message: ScaleReceiverReply | ScaleReceiverListening) => {
    if (message.type === "listening") listening(message.port);
    else {
      pending.get(message.id)?.resolve(message);
      pending.delete(message.id);
    }
  });
  child.once("exit", (code, signal) => {
    for (const waiter of pending.values())
      waiter.reject(new Error(`the receiver exited (${signal ?? code})`));
    pending.clear();
  });
  track(child, async () => {
    if (child.connected) child.disconnect();
    await exited;
  });
  let nextId = 1;
  const ask = (request: Request) =>
    new Promise<ScaleReceiverReply>((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      child.send({ ...request, id });
    });
  const base = `http://127.0.0.1:${await port}`;
  return {
    pid: child.pid ?? 0,
    url: (group, mode = "ok") => `${base}/${group}/${mode}`,
    reset: async () => {
      await ask({ type: "reset" });
    },
    times: async (group) => {
      const answer = await ask({ type: "times", group });
      return answer.type === "times" ? answer.times : [];
    },
    waitFor: async (group, count) => {
      await ask({ type: "wait", group, count });
    },
    probes: async () => {
      const answer = await ask({ type: "probes" });
      return answer.type === "probes" ? answer.probes : {};
    },
  };
}
