import { parseArgs } from "node:util";
import type { BackendKind } from "./options.js";

export const SECTIONS = ["idle", "hanging", "rate", "backlog", "fanout"] as const;
export type Section = (typeof SECTIONS)[number];

/** What one `pnpm bench:scale` invocation measures. */
export interface ScaleOptions {
  backends: BackendKind[];
  sections: Section[];
  /** Endpoints registered for the idle figures and for the fan-out. */
  endpoints: number;
  tenants: number;
  idleSeconds: number;
  healthy: number;
  events: number;
  backlog: number;
  /** Longest time spent queueing the backlog. */
  fillTimeoutMs: number;
  slowMs: number;
  probes: number;
  probeGapMs: number;
  rate: number;
  burst: number;
  /** Stop registering once the consuming process holds this many Redis + PostgreSQL connections. */
  maxConnections: number;
  /** ... or this many open descriptors. */
  maxFds: number;
  /** Longest wait for the counts to settle before an idle window. */
  settleTimeoutMs: number;
  /** Longest wait of any one phase (registering, settling, a fan-out, a drain). */
  phaseTimeoutMs: number;
}

export const SCALE_USAGE = `usage: pnpm bench:scale [options]
  --backend B          embedded | servers | both (default both)
  --only LIST          sections, comma-separated: ${SECTIONS.join(",")} (default all)
  --endpoints E        endpoints for the idle figures and the fan-out (default 10000)
  --tenants T          tenants the idle endpoints are spread over (default 10)
  --idle-s S           length of each idle window (default 20)
  --healthy K          healthy endpoints in the hanging-endpoint run (default 4)
  --events N           events in each hanging-endpoint run (default 500)
  --backlog B          deliveries queued for the slow endpoint (default 20000)
  --fill-s S           stop queueing the backlog after S s, and say how much was queued (default 60)
  --slow-ms MS         how long the slow endpoint takes to answer (default 2000)
  --probes P           paced deliveries timed behind the backlog (default 100)
  --probe-gap-ms MS    pause between them (default 50)
  --rate R             rate_limit_per_second of the rate-limited endpoint (default 20)
  --burst N            events sent to it at once (default 200)
  --max-connections C  stop registering once a process holds C Redis + PostgreSQL connections
                       (default 3000; the Redis here is shared and allows 10000 clients)
  --max-fds F          ... or F open descriptors (default 8000)
  --settle-s S         longest wait for connection and descriptor counts to stay still 5 s (default 30)
  --phase-timeout-s S  longest wait of one phase: registering, deleting, a fan-out (default 40)`;

const STRING = { type: "string" } as const;

/** Parses the command line; throws an Error naming the bad flag. */
export function parseScaleOptions(argv: string[]): ScaleOptions | "help" {
  const { values } = parseArgs({
    args: argv,
    options: {
      help: { type: "boolean", short: "h" },
      backend: STRING,
      only: STRING,
      endpoints: STRING,
      tenants: STRING,
      "idle-s": STRING,
      healthy: STRING,
      events: STRING,
      backlog: STRING,
      "slow-ms": STRING,
      "fill-s": STRING,
      probes: STRING,
      "probe-gap-ms": STRING,
      rate: STRING,
      burst: STRING,
      "max-connections": STRING,
      "max-fds": STRING,
      "phase-timeout-s": STRING,
      "settle-s": STRING,
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) return "help";
  const backend = values.backend ?? "both";
  if (backend !== "embedded" && backend !== "servers" && backend !== "both") {
    throw new Error(`--backend must be embedded, servers or both, not "${backend}"`);
  }
  const sections = (values.only ?? SECTIONS.join(",")).split(",").map((name) => name.trim());
  for (const name of sections) {
    if (!(SECTIONS as readonly string[]).includes(name)) {
      throw new Error(`--only takes ${SECTIONS.join(", ")}, not "${name}"`);
    }
  }
  const rate = Number(values.rate ?? 20);
  if (!(rate > 0 && rate <= 10_000)) throw new Error(`--rate must be a number above 0, not "${values.rate}"`);
  return {
    backends: backend === "both" ? ["embedded", "servers"] : [backend],
    sections: SECTIONS.filter((name) => sections.includes(name)),
    endpoints: int("--endpoints", values.endpoints, 10_000, 1, 100_000),
    tenants: int("--tenants", values.tenants, 10, 1, 1000),
    idleSeconds: int("--idle-s", values["idle-s"], 20, 1, 600),
    healthy: int("--healthy", values.healthy, 4, 1, 100),
    events: int("--events", values.events, 500, 1, 1_000_000),
    backlog: int("--backlog", values.backlog, 20_000, 0, 1_000_000),
    fillTimeoutMs: int("--fill-s", values["fill-s"], 60, 1, 3600) * 1000,
    slowMs: int("--slow-ms", values["slow-ms"], 2000, 0, 60_000),
    probes: int("--probes", values.probes, 100, 1, 100_000),
    probeGapMs: int("--probe-gap-ms", values["probe-gap-ms"], 50, 0, 60_000),
    rate,
    burst: int("--burst", values.burst, 200, 2, 1_000_000),
    maxConnections: int("--max-connections", values["max-connections"], 3000, 10, 100_000),
    maxFds: int("--max-fds", values["max-fds"], 8000, 100, 1_000_000),
    settleTimeoutMs: int("--settle-s", values["settle-s"], 30, 5, 3600) * 1000,
    phaseTimeoutMs: int("--phase-timeout-s", values["phase-timeout-s"], 40, 5, 3600) * 1000,
  };
}

function int(flag: string, text: string | undefined, fallback: number, min: number, max: number): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new Error(`${flag} must be a whole number from ${min} to ${max}, not "${text}"`);
  }
  return n;
}
