import { Code, ConnectError } from "@connectrpc/connect";
import type { HooklineClient } from "@hookline/client";

export interface StreamOptions {
  client: HooklineClient;
  tenantId: string;
  /** Event ids are `<prefix><n>`. */
  prefix: string;
  count: number;
  perSecond: number;
  concurrency: number;
  /**
   * retry: an Emit that fails is sent again with the same event id (what a careful producer does)
   * until it succeeds or the deadline passes. give-up: a failed Emit is left uncertain, so only the
   * store knows whether it was committed.
   */
  onError: "retry" | "give-up";
  /** No Emit is sent or retried after this (ms since start). */
  deadlineMs: number;
}

/** A stream of Emit calls running in the background. */
export interface EventStream {
  /** Event id → when Emit answered OK. */
  readonly acked: Map<string, number>;
  /** Event ids whose Emit failed and was given up on. */
  readonly uncertain: Set<string>;
  /** Failed Emit calls by gRPC code name, and when each code was first and last seen. */
  readonly errors: Map<string, { count: number; first: number; last: number }>;
  /** Holds new Emit calls until the returned function is called; the schedule waits too. */
  hold(): () => void;
  readonly done: Promise<void>;
}

export function startEventStream(options: StreamOptions): EventStream {
  const acked = new Map<string, number>();
  const uncertain = new Set<string>();
  const errors = new Map<string, { count: number; first: number; last: number }>();
  let gate: Promise<void> = Promise.resolve();
  const started = Date.now();
  // Time spent on hold: the schedule moves on by it, so a release brings no burst of catch-up calls.
  let held = 0;
  let next = 0;
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  const note = (error: unknown) => {
    const code = error instanceof ConnectError ? Code[error.code] : "not-a-connect-error";
    const now = Date.now();
    const seen = errors.get(code) ?? { count: 0, first: now, last: now };
    errors.set(code, { count: seen.count + 1, first: seen.first, last: now });
  };
  const emitOne = async (n: number) => {
    const eventId = `${options.prefix}${n}`;
    for (let tries = 0; tries < 1000; tries++) {
      await gate;
      try {
        await options.client.emit.emit(
          {
            tenantId: options.tenantId,
            eventId,
            eventType: "fault.test",
            dataJson: JSON.stringify({ n, pad: "x".repeat(200) }),
          },
          { timeoutMs: 10_000 },
        );
        acked.set(eventId, Date.now());
        return;
      } catch (error) {
        note(error);
        if (options.onError === "give-up" || Date.now() - started > options.deadlineMs) {
          uncertain.add(eventId);
          return;
        }
        await pause(Math.min(1000, 50 * 2 ** Math.min(tries, 5)));
      }
    }
    uncertain.add(eventId);
  };
  const lane = async () => {
    while (next < options.count) {
      const n = next++;
      const due = started + held + (n * 1000) / options.perSecond;
      if (due > Date.now()) await pause(due - Date.now());
      await emitOne(n);
    }
  };
  const done = Promise.all(Array.from({ length: options.concurrency }, lane)).then(() => {});
  return {
    acked,
    uncertain,
    errors,
    hold() {
      const since = Date.now();
      let open = () => {};
      gate = new Promise((resolve) => {
        open = resolve;
      });
      return () => {
        held += Date.now() - since;
        open();
      };
    },
    done,
  };
}

/** Waits until check() is true, polling; fails naming what it waited for. */
export async function until(what: string, check: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const traceStart = Date.now();
/** Progress lines on stderr with FAULTS_TRACE=1, for seeing where a slow run spends its time. */
export function trace(message: string): void {
  if (process.env.FAULTS_TRACE === "1")
    console.error(`[faults +${((Date.now() - traceStart) / 1000).toFixed(1)}s] ${message}`);
}
