import type { HooklineProcess } from "@hookline/testkit";
import { RETRY_WAITS_MS } from "./backend.js";
import { type ServiceOutcome, startedAtMs } from "./scenario.js";

/**
 * How punctual the service was, for stderr: when each first attempt started after the emit, and
 * how long each retry waited against its scheduled wait (which carries the service's random jitter).
 */
export function describeTimings(outcome: ServiceOutcome): string[] {
  const lines = [`all deliveries final ${outcome.finalAtMs - outcome.emittedAtMs} ms after the emit`];
  const endpoints = [...new Set(outcome.attempts.map((a) => a.endpointId))];
  for (const endpoint of endpoints) {
    const attempts = outcome.attempts.filter((a) => a.endpointId === endpoint);
    const parts = attempts.map((attempt, i) => {
      const start = startedAtMs(attempt);
      const previous = attempts[i - 1];
      if (!previous) return `try 1 at +${Math.round(start - outcome.emittedAtMs)} ms`;
      const waited = start - (startedAtMs(previous) + previous.durationMs);
      return `try ${attempt.attemptNumber} waited ${Math.round(waited)} ms (scheduled ${RETRY_WAITS_MS[i - 1]})`;
    });
    lines.push(
      `${endpoint}: ${parts.join("; ")}; durations ${attempts.map((a) => a.durationMs).join(", ")} ms`,
    );
  }
  return lines;
}

/** The warnings and errors the service processes logged, each prefixed with its process. */
export function loggedTrouble(processes: readonly { name: string; process: HooklineProcess }[]): string[] {
  return processes.flatMap(({ name, process }) =>
    process.log
      .filter((line) => /"level":"(warn|error)"/.test(line))
      .map((line) => `${name}: ${line.trimEnd()}`),
  );
}
