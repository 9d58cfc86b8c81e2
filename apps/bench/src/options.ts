import { parseArgs } from "node:util";

export type BackendKind = "embedded" | "servers";

/** The parts of `pnpm bench`, each selectable with --only. */
export const SECTIONS = ["throughput", "retry", "emit"] as const;
export type Section = (typeof SECTIONS)[number];

/** What one `pnpm bench` invocation measures. */
export interface BenchOptions {
  events: number;
  endpoints: number;
  backends: BackendKind[];
  /** HOOKLINE_ENDPOINT_CONCURRENCY for the Hookline processes; undefined: the product default. */
  concurrency: number | undefined;
  /** Emit RPCs in flight from the bench client. */
  emitConcurrency: number;
  /** Requests in the plain POST loop that sets the ceiling. */
  ceilingRequests: number;
  /** Where the Hookline processes write .cpuprofile files; undefined: no profiling. */
  profileDir: string | undefined;
  /** Extra variables for the Hookline processes (experiments: lanes, queue on Redis with PGlite...). */
  env: Record<string, string>;
  /** A run (one backend) that lasts longer than this fails. */
  runTimeoutMs: number;
  sections: Set<Section>;
  /** Throughput: how many times the interleaved sequence (reference, Hookline, ...) runs. */
  rounds: number;
  /** The reference design's worker concurrency per endpoint queue. */
  referenceConcurrency: number;
  /** Retry lateness: paced new deliveries per second, for how long, and the burst's size. */
  retryRate: number;
  retrySeconds: number;
  retryBurst: number;
  /** Emit latency: paced events per second and for how long; then the closed loop's length. */
  emitRate: number;
  emitSeconds: number;
  emitMaxSeconds: number;
}

export const PRODUCT_DEFAULT_CONCURRENCY = "adaptive";

export const USAGE = `usage: pnpm bench [options]
  --events N          events to emit (default 5000)
  --endpoints M       endpoints each event goes to (default 4)
  --backend B         embedded | servers | both (default both)
  --concurrency C     HOOKLINE_ENDPOINT_CONCURRENCY for the run, a fixed cap (default: the product default, ${PRODUCT_DEFAULT_CONCURRENCY})
  --emit-concurrency  Emit RPCs in flight (default 32)
  --ceiling-requests  requests in the plain POST loop (default 20000)
  --profile DIR       CPU-profile the Hookline processes (like --cpu-prof), writing into DIR
  --env NAME=VALUE    also set this for the Hookline processes (repeatable)
  --timeout-s S       fail a backend run that takes longer (default 300)
  --only LIST         sections to run, comma-separated: ${SECTIONS.join(",")} (default all)
  --rounds R          throughput: repeat the interleaved runs R times (default 1)
  --reference-concurrency  the reference worker's concurrency per endpoint queue (default 50)
  --retry-rate R      retry lateness: new deliveries per second in the paced part (default 40)
  --retry-seconds S   retry lateness: length of the paced part (default 10)
  --retry-burst B     retry lateness: deliveries in the burst (default 200)
  --emit-rate R       Emit latency: paced events per second (default 1000)
  --emit-seconds S    Emit latency: length of the paced part (default 10)
  --emit-max-seconds S  Emit: length of the closed loop that finds the most accepted events/s (default 5)`;

/** Parses the command line; throws an Error naming the bad flag. */
export function parseOptions(argv: string[]): BenchOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      events: { type: "string" },
      endpoints: { type: "string" },
      backend: { type: "string" },
      concurrency: { type: "string" },
      "emit-concurrency": { type: "string" },
      "ceiling-requests": { type: "string" },
      profile: { type: "string" },
      "timeout-s": { type: "string" },
      env: { type: "string", multiple: true },
      only: { type: "string" },
      rounds: { type: "string" },
      "reference-concurrency": { type: "string" },
      "retry-rate": { type: "string" },
      "retry-seconds": { type: "string" },
      "retry-burst": { type: "string" },
      "emit-rate": { type: "string" },
      "emit-seconds": { type: "string" },
      "emit-max-seconds": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) throw new UsageRequested();
  const backend = values.backend ?? "both";
  if (backend !== "embedded" && backend !== "servers" && backend !== "both") {
    throw new Error(`--backend must be embedded, servers or both, not "${backend}"`);
  }
  return {
    events: int("--events", values.events, 5000, 1, 1_000_000),
    endpoints: int("--endpoints", values.endpoints, 4, 1, 100),
    backends: backend === "both" ? ["embedded", "servers"] : [backend],
    concurrency:
      values.concurrency === undefined ? undefined : int("--concurrency", values.concurrency, 2, 1, 1000),
    emitConcurrency: int("--emit-concurrency", values["emit-concurrency"], 32, 1, 1024),
    ceilingRequests: int("--ceiling-requests", values["ceiling-requests"], 20_000, 100, 10_000_000),
    profileDir: values.profile,
    env: Object.fromEntries(
      (values.env ?? []).map((pair) => {
        const match = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s.exec(pair);
        if (!match?.[1]) throw new Error(`--env takes NAME=VALUE, not "${pair}"`);
        return [match[1], match[2] ?? ""];
      }),
    ),
    runTimeoutMs: int("--timeout-s", values["timeout-s"], 300, 10, 3600) * 1000,
    sections: parseSections(values.only),
    rounds: int("--rounds", values.rounds, 1, 1, 100),
    referenceConcurrency: int("--reference-concurrency", values["reference-concurrency"], 50, 1, 1000),
    retryRate: int("--retry-rate", values["retry-rate"], 40, 1, 10_000),
    retrySeconds: int("--retry-seconds", values["retry-seconds"], 10, 1, 3600),
    retryBurst: int("--retry-burst", values["retry-burst"], 200, 1, 1_000_000),
    emitRate: int("--emit-rate", values["emit-rate"], 1000, 1, 100_000),
    emitSeconds: int("--emit-seconds", values["emit-seconds"], 10, 1, 3600),
    emitMaxSeconds: int("--emit-max-seconds", values["emit-max-seconds"], 5, 1, 3600),
  };
}

function parseSections(text: string | undefined): Set<Section> {
  if (text === undefined) return new Set(SECTIONS);
  const names = text.split(",").map((name) => name.trim());
  for (const name of names) {
    if (!(SECTIONS as readonly string[]).includes(name))
      throw new Error(`--only takes ${SECTIONS.join(", ")} (comma-separated), not "${name}"`);
  }
  return new Set(names as Section[]);
}

/** Thrown for --help: print the usage and exit 0. */
export class UsageRequested extends Error {}

function int(flag: string, text: string | undefined, fallback: number, min: number, max: number): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new Error(`${flag} must be a whole number from ${min} to ${max}, not "${text}"`);
  }
  return n;
}
