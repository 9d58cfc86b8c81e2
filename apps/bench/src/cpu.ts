import { readdirSync, readFileSync } from "node:fs";

// CPU seconds per process from /proc (Linux): which process a run keeps busy. Elsewhere the
// readings are empty and the CPU table is left out.

const TICKS_PER_SECOND = 100; // USER_HZ, 100 on every mainstream Linux build

/** Named groups of processes whose CPU is sampled: a list of pids, or every process with that command name. */
export type CpuTargets = Record<string, { pids: number[] } | { command: string } | { machine: true }>;

/** CPU seconds so far of each process in each group (the machine's total under pid 0). */
export type CpuSample = Map<string, Map<number, number>>;

/** User + system CPU seconds used so far by each process of each group. */
export function sampleCpu(targets: CpuTargets): CpuSample {
  const sample: CpuSample = new Map();
  let all: { pid: number; command: string }[] | undefined;
  for (const [name, target] of Object.entries(targets)) {
    let pids: number[];
    if ("machine" in target) {
      sample.set(name, new Map([[0, machineCpuSeconds()]]));
      continue;
    }
    if ("pids" in target) pids = target.pids;
    else {
      all ??= listProcesses();
      pids = all.filter((p) => p.command === target.command).map((p) => p.pid);
    }
    sample.set(name, new Map(pids.map((pid) => [pid, cpuSecondsOf(pid)])));
  }
  return sample;
}

/**
 * CPU seconds each group used between two samples, process by process: a process that started
 * in between counts all it used, one that exited counts nothing (its last seconds are lost), so
 * connections of a shared server that come and go do not cancel out the ones that stay.
 */
export function cpuBetween(before: CpuSample, after: CpuSample): Map<string, number> {
  const used = new Map<string, number>();
  for (const [name, pids] of after) {
    let seconds = 0;
    for (const [pid, now] of pids) seconds += Math.max(0, now - (before.get(name)?.get(pid) ?? 0));
    used.set(name, seconds);
  }
  return used;
}

/** Busy CPU seconds of the whole machine, every core and every process (ours or not). */
function machineCpuSeconds(): number {
  try {
    const fields = readFileSync("/proc/stat", "utf8").split("\n")[0]?.trim().split(/\s+/).slice(1) ?? [];
    // user nice system idle iowait irq softirq steal: everything but idle and iowait is busy.
    const busy = [0, 1, 2, 5, 6, 7].reduce((sum, i) => sum + Number(fields[i] ?? 0), 0);
    return busy / TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

/** CPU seconds (user + system) one process has used so far; 0 once it is gone. */
export function cpuSecondsOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name may hold spaces and parentheses: the fields start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

function listProcesses(): { pid: number; command: string }[] {
  let entries: string[];
  try {
    entries = readdirSync("/proc").filter((name) => /^\d+$/.test(name));
  } catch {
    return [];
  }
  const processes: { pid: number; command: string }[] = [];
  for (const entry of entries) {
    try {
      processes.push({ pid: Number(entry), command: readFileSync(`/proc/${entry}/comm`, "utf8").trim() });
    } catch {
      // exited while we looked
    }
  }
  return processes;
}
