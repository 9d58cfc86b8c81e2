import { readdirSync, readFileSync } from "node:fs";

// CPU seconds per process from /proc (Linux): which process a run keeps busy. Elsewhere the
// readings are empty and the CPU table is left out.

const TICKS_PER_SECOND = 100; // USER_HZ, 100 on every mainstream Linux build

/** Named groups of processes whose CPU is sampled: a list of pids, or every process with that command name. */
export type CpuTargets = Record<string, { pids: number[] } | { command: string } | { machine: true }>;

/**
 * CPU seconds so far of each process in each group, keyed by "pid/start time" so a pid the kernel
 * hands to a new process is a new process here (the machine's total is under "machine").
 * A process that could not be read (gone) is left out, not read as 0.
 */
export type CpuSample = Map<string, Map<string, number>>;

/** User + system CPU seconds used so far by each process of each group. */
export function sampleCpu(targets: CpuTargets): CpuSample {
  const sample: CpuSample = new Map();
  let all: { pid: number; command: string }[] | undefined;
  for (const [name, target] of Object.entries(targets)) {
    let pids: number[];
    if ("machine" in target) {
      sample.set(name, new Map([["machine", machineCpuSeconds()]]));
      continue;
    }
    if ("pids" in target) pids = target.pids;
    else {
      all ??= listProcesses();
      pids = all.filter((p) => p.command === target.command).map((p) => p.pid);
    }
    const readings = new Map<string, number>();
    for (const pid of pids) {
      const reading = readStat(pid);
      if (reading) readings.set(`${pid}/${reading.startTicks}`, reading.seconds);
    }
    sample.set(name, readings);
  }
  return sample;
}

/**
 * CPU seconds each group used between two samples, process by process: a process that started
 * in between counts all it used, one missing from `after` counts nothing, so connections of a
 * shared server that come and go do not cancel out the ones that stay. Two samples alone lose
 * all the CPU of a process that exits in between: measure a window with watchCpu instead.
 */
export function cpuBetween(before: CpuSample, after: CpuSample): Map<string, number> {
  const used = new Map<string, number>();
  for (const [name, processes] of after) {
    let seconds = 0;
    for (const [key, now] of processes) seconds += Math.max(0, now - (before.get(name)?.get(key) ?? 0));
    used.set(name, seconds);
  }
  return used;
}

/** A measured window: stop() takes the last sample and gives the CPU seconds each group used. */
export interface CpuWindow {
  stop(): Map<string, number>;
}

/**
 * Starts a window over targets, sampling every intervalMs until stop(). A PostgreSQL backend
 * (pg-pool closes idle clients after 5–10 s) can work and exit inside a window: its last reading
 * is kept, so only what it used after that reading (at most intervalMs of it) is lost. A process
 * that appears mid-window counts from 0. The timer is unref'd: a window left open holds nothing up.
 */
export function watchCpu(targets: CpuTargets, intervalMs = 250): CpuWindow {
  const before = sampleCpu(targets);
  // The latest reading of every process seen, the gone ones included.
  const latest: CpuSample = new Map([...before].map(([name, readings]) => [name, new Map(readings)]));
  const take = () => {
    for (const [name, readings] of sampleCpu(targets)) {
      const kept = latest.get(name) ?? new Map<string, number>();
      latest.set(name, kept);
      for (const [key, seconds] of readings) kept.set(key, seconds);
    }
  };
  const timer = setInterval(take, intervalMs);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      take();
      return cpuBetween(before, latest);
    },
  };
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

/** CPU seconds (user + system) one process has used so far, and when it started; undefined once gone. */
function readStat(pid: number): { seconds: number; startTicks: string } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name may hold spaces and parentheses: the fields start after the last ')'
    // (state is field 3, so field n is at n - 3: utime 14, stime 15, starttime 22).
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return {
      seconds: (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND,
      startTicks: fields[19] ?? "",
    };
  } catch {
    return undefined;
  }
}

/** CPU seconds (user + system) one process has used so far; 0 once it is gone. */
export function cpuSecondsOf(pid: number): number {
  return readStat(pid)?.seconds ?? 0;
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
