import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { cpuSecondsOf } from "./cpu.js";

// What one process holds, from /proc (Linux): TCP connections by the server they go to, resident
// memory, open descriptors and CPU time. Elsewhere every reading is zero.

const REDIS_PORT = 6379;
const POSTGRES_PORT = 5432;

/** One reading of one process. */
export interface ProcessReading {
  at: number;
  redis: number;
  postgres: number;
  /** Established TCP connections to anything else (PGlite's socket, the receiver, clients). */
  otherTcp: number;
  rssBytes: number;
  fds: number;
  cpuSeconds: number;
}

/** Reads the process now. */
export function readProcess(pid: number): ProcessReading {
  const inodes = socketInodes(pid);
  const ports = remotePortsByInode();
  let redis = 0;
  let postgres = 0;
  let otherTcp = 0;
  for (const inode of inodes.sockets) {
    const port = ports.get(inode);
    if (port === undefined) continue;
    if (port === REDIS_PORT) redis += 1;
    else if (port === POSTGRES_PORT) postgres += 1;
    else otherTcp += 1;
  }
  return {
    at: performance.now(),
    redis,
    postgres,
    otherTcp,
    rssBytes: rssOf(pid),
    fds: inodes.fds,
    cpuSeconds: cpuSecondsOf(pid),
  };
}

/** A window's figures: the end reading, with CPU as a share of one core over the window. */
export interface WindowFigures extends ProcessReading {
  seconds: number;
  /** 100 = one core busy. */
  cpuPercent: number;
  /** Highest of each count seen during the window. */
  peakRedis: number;
  peakPostgres: number;
  peakFds: number;
}

/** Watches the process for ms, sampling every second, and sums the window up. */
export async function measureWindow(pid: number, ms: number): Promise<WindowFigures> {
  const first = readProcess(pid);
  let last = first;
  let peakRedis = first.redis;
  let peakPostgres = first.postgres;
  let peakFds = first.fds;
  const until = first.at + ms;
  while (performance.now() < until) {
    await sleep(Math.min(1_000, until - performance.now()));
    last = readProcess(pid);
    peakRedis = Math.max(peakRedis, last.redis);
    peakPostgres = Math.max(peakPostgres, last.postgres);
    peakFds = Math.max(peakFds, last.fds);
  }
  const seconds = (last.at - first.at) / 1000;
  return {
    ...last,
    seconds,
    cpuPercent: seconds > 0 ? (100 * (last.cpuSeconds - first.cpuSeconds)) / seconds : 0,
    peakRedis,
    peakPostgres,
    peakFds,
  };
}

/**
 * Waits until the processes' connection and descriptor counts have not changed for quietMs, or
 * timeoutMs passes; resolves to whether they settled. CPU is no criterion: burning CPU with
 * nothing to do is what the idle window measures.
 */
export async function waitSettled(pids: number[], quietMs: number, timeoutMs: number): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  const key = () =>
    pids
      .map(readProcess)
      .map((r) => `${r.redis}/${r.postgres}/${r.fds}`)
      .join(" ");
  let previous = key();
  let stableSince = performance.now();
  while (performance.now() < deadline) {
    await sleep(1_000);
    const now = key();
    if (now !== previous) stableSince = performance.now();
    previous = now;
    if (performance.now() - stableSince >= quietMs) return true;
  }
  return false;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

function socketInodes(pid: number): { fds: number; sockets: string[] } {
  let entries: string[];
  try {
    entries = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return { fds: 0, sockets: [] };
  }
  const sockets: string[] = [];
  for (const entry of entries) {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${entry}`));
      if (match?.[1]) sockets.push(match[1]);
    } catch {
      // closed while we looked
    }
  }
  return { fds: entries.length, sockets };
}

/** Socket inode to remote port, for every established TCP connection on the machine. */
function remotePortsByInode(): Map<string, number> {
  const ports = new Map<string, number>();
  for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const fields = line.trim().split(/\s+/);
      // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
      const remote = fields[2];
      const state = fields[3];
      const inode = fields[9];
      if (!remote || !inode || state !== "01") continue;
      ports.set(inode, Number.parseInt(remote.slice(remote.lastIndexOf(":") + 1), 16));
    }
  }
  return ports;
}

function rssOf(pid: number): number {
  try {
    const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match?.[1] ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}
