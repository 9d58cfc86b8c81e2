import type { CeilingResult } from "./ceiling.js";
import type { ApiLatency, EmitLatencyResult } from "./emit-latency-run.js";
import { quantile } from "./emit-load.js";
import type { QueueFloor } from "./queue-floor.js";
import { MACHINE, table } from "./report.js";
import type { RetryResult } from "./retry-run.js";
import type { ThroughputRun } from "./throughput.js";

// The tables of the reference comparison, the queue floor, retry lateness and Emit latency sections.

const fixed = (n: number, digits = 0) =>
  Number.isFinite(n)
    ? n.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits })
    : "-";

/** One Hookline run and the reference run it is compared with, measured in the same round. */
export interface ComparedPair {
  round: number;
  /** The plain POST loop measured at the start of this round. */
  ceiling: CeilingResult;
  reference: ThroughputRun | undefined;
  hookline: ThroughputRun;
}

/** CPU ms every process of the run used per delivery (the machine's own total left out). */
function cpuMsPerDelivery(run: ThroughputRun): number {
  const seconds = [...run.cpu].filter(([name]) => name !== MACHINE).reduce((sum, [, s]) => sum + s, 0);
  return (1000 * seconds) / run.deliveries;
}

/** Reference and Hookline rows, each Hookline row with its ratio to the reference beside it. */
export function comparisonTable(pairs: ComparedPair[]): string {
  const row = (
    round: number,
    ceiling: CeilingResult,
    run: ThroughputRun,
    reference: ThroughputRun | undefined,
  ) => {
    const perSecond = run.deliveries / run.seconds;
    const machine = run.cpu.get(MACHINE);
    return [
      String(round),
      run.label,
      fixed(run.deliveries),
      fixed(run.seconds, 2),
      fixed(perSecond),
      reference ? fixed(perSecond / (reference.deliveries / reference.seconds), 2) : "-",
      fixed(perSecond / ceiling.perSecond, 3),
      fixed(cpuMsPerDelivery(run), 2),
      machine === undefined ? "-" : `${fixed((100 * machine) / run.seconds)}%`,
    ];
  };
  const rows = pairs.flatMap(({ round, ceiling, reference, hookline }) => [
    ...(reference ? [row(round, ceiling, reference, undefined)] : []),
    row(round, ceiling, hookline, reference),
  ]);
  return table(
    [
      "round",
      "run",
      "deliveries",
      "seconds",
      "deliveries/s",
      "÷ reference",
      "÷ plain POST",
      "CPU ms/delivery",
      "whole machine",
    ],
    rows,
  );
}

/**
 * What BullMQ alone costs per job, and the share of each servers run's CPU per delivery it makes
 * at least (that CPU also counts the bench's Emit client and the receiver).
 */
export function queueFloorTable(floor: QueueFloor, pairs: ComparedPair[]): string {
  const part = (name: string, p: QueueFloor["add"]) => [
    name,
    fixed(p.nodeUs),
    fixed(p.redisUs),
    fixed(p.redisCommands, 1),
  ];
  const bothMs = (floor.add.nodeUs + floor.add.redisUs + floor.take.nodeUs + floor.take.redisUs) / 1000;
  const shares = pairs
    .filter((pair) => pair.hookline.label.includes("servers"))
    .map((pair) => {
      const ms = cpuMsPerDelivery(pair.hookline);
      return `  round ${pair.round}: Hookline servers used ${fixed(ms, 2)} ms of CPU per delivery; BullMQ's part of it is at least ${fixed(bothMs, 2)} ms (${fixed((100 * bothMs) / ms)}%)`;
    });
  return [
    `BullMQ alone on Redis, driven by Hookline's queue code with a processor that does nothing (${fixed(floor.jobs)} jobs over ${floor.queues} queues): a floor under every delivery`,
    table(
      ["part", "Node CPU µs/job", "Redis CPU µs/job", "Redis commands/job"],
      [
        part("add (DeliveryProducer, as Emit)", floor.add),
        part("take (DeliveryConsumer, as the worker)", floor.take),
        [
          "both",
          fixed(floor.add.nodeUs + floor.take.nodeUs),
          fixed(floor.add.redisUs + floor.take.redisUs),
          fixed(floor.add.redisCommands + floor.take.redisCommands, 1),
        ],
      ],
    ),
    ...shares,
  ].join("\n");
}

/** Retry lateness per backend: paced and burst, p50 and p99 and the worst. */
export function retryTable(results: RetryResult[], scheduleMs: number[]): string {
  const rows = results.flatMap((result) =>
    (
      [
        ["paced", result.paced, result.pacedDeliveries, result.pacedEngineShare],
        ["burst", result.burst, result.burstDeliveries, result.burstEngineShare],
      ] as const
    ).map(([part, lateness, deliveries, engineShare]) => [
      result.backend,
      part,
      fixed(deliveries),
      fixed(lateness.length),
      fixed(quantile(lateness, 0.5), 1),
      fixed(quantile(lateness, 0.99), 1),
      fixed(lateness.at(-1) ?? Number.NaN, 1),
      engineShare === undefined ? "-" : `${Math.round(engineShare * 100)}%`,
    ]),
  );
  return [
    `Retry lateness (schedule ${scheduleMs.map((ms) => `${ms}ms`).join(",")}, no jitter): retry's arrival − (previous answer + wait)`,
    table(["backend", "load", "deliveries", "retries", "p50 ms", "p99 ms", "max ms", "db thread busy"], rows),
    "db thread busy: embedded only, the share of one core PGlite's thread took from the first Emit to the last request (hookline_embedded_engine_busy_seconds_total)",
  ].join("\n");
}

/** Emit latency at the paced rate, and the most events/s accepted. */
export function emitLatencyTable(results: EmitLatencyResult[], perSecond: number, endpoints: number): string {
  const rows = results.map((result) => [
    result.backend,
    fixed(result.pacedEvents),
    fixed(result.pacedEvents / result.paced.sendSeconds),
    fixed(quantile(result.paced.latenciesMs, 0.5), 1),
    fixed(quantile(result.paced.latenciesMs, 0.99), 1),
    result.alone
      ? `${fixed(quantile(result.alone.paced.latenciesMs, 0.5), 1)} / ${fixed(quantile(result.alone.paced.latenciesMs, 0.99), 1)}`
      : "-",
    fixed(result.maxEvents / result.maxSeconds),
    result.alone ? fixed(result.alone.events / result.alone.seconds) : "-",
  ]);
  const shares = (cpu: Map<string, number>, seconds: number) =>
    [...cpu]
      .map(([name, used]) => `${name === MACHINE ? "whole machine" : name} ${fixed((100 * used) / seconds)}%`)
      .join(", ");
  // Undefined past the largest finite bucket (10 s): shown as "-".
  const ms = (api: ApiLatency) =>
    `p50 ${fixed(api.p50Ms ?? Number.NaN, 1)} / p99 ${fixed(api.p99Ms ?? Number.NaN, 1)} ms`;
  const apiLines = results.map(
    (result) =>
      `  ${result.backend}, the paced Emits as the api timed them (hookline_rpc_handling_seconds, within its buckets): ${ms(result.pacedApi)}` +
      (result.alone ? `; worker stopped ${ms(result.alone.pacedApi)}` : ""),
  );
  const cpuLines = results.flatMap((result) => [
    `  ${result.backend}, CPU during the closed loop (100% = one core): ${shares(result.maxCpu, result.maxSeconds)}`,
    ...(result.alone
      ? [
          `  ${result.backend}, the same with the worker stopped: ${shares(result.alone.cpu, result.alone.seconds)}`,
        ]
      : []),
  ]);
  return [
    `Emit at a paced ${fixed(perSecond)} events/s (${endpoints} endpoints each), then a closed loop of ${results[0]?.maxInFlight ?? "-"} in flight; on servers both again with the worker stopped:`,
    table(
      [
        "backend",
        "paced events",
        "sent/s",
        "p50 ms",
        "p99 ms",
        "worker stopped: p50 / p99 ms",
        "max accepted events/s",
        "the same, worker stopped",
      ],
      rows,
    ),
    ...apiLines,
    ...cpuLines,
  ].join("\n");
}
