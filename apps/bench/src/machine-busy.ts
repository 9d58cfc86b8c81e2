import { cpuBetween, sampleCpu } from "./cpu.js";

const MACHINE = { machine: { machine: true as const } };

/** Starts watching the whole machine; the result says how busy it was since (100 = one core). */
export function watchMachine(): () => number {
  const before = sampleCpu(MACHINE);
  const started = performance.now();
  return () => {
    const busy = cpuBetween(before, sampleCpu(MACHINE)).get("machine") ?? 0;
    return (100 * busy) / Math.max(0.001, (performance.now() - started) / 1000);
  };
}
