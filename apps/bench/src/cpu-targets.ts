import type { CpuTargets } from "./cpu.js";
import type { BackendKind } from "./options.js";
import { MACHINE } from "./report.js";

/** What a Hookline run's CPU table covers: its own processes, the receiver, the bench, the machine. */
export function hooklineCpuTargets(
  kind: BackendKind,
  apps: readonly string[],
  pids: readonly (number | undefined)[],
  receiverPid: number,
): CpuTargets {
  return {
    ...Object.fromEntries(pids.map((pid, i) => [apps[i] ?? "app", { pids: [pid ?? 0] }])),
    receiver: { pids: [receiverPid] },
    bench: { pids: [process.pid] },
    // The servers are shared: every process of that name counts, whoever it serves.
    ...(kind === "servers" && {
      "postgres*": { command: "postgres" },
      "redis*": { command: "redis-server" },
    }),
    [MACHINE]: { machine: true },
  };
}
