#!/usr/bin/env node
import { interruptedStatus, run } from "./run.js";

// `hookline`: the command line for Hookline's api. See `hookline --help`.
const interrupt = new AbortController();
// Only a command still running after its work is set up (tail) waits for this; an interrupt ends
// it cleanly. A second interrupt quits at once.
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    if (interrupt.signal.aborted) process.exit(interruptedStatus(signal));
    interrupt.abort(signal);
  });
}
// A reader that goes away (`hookline tail | head`) is a normal end, not a crash.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code === "EPIPE") {
    interrupt.abort();
    process.exit(0);
  }
  throw error;
});

process.exitCode = await run(process.argv.slice(2), {
  env: process.env,
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  readStdin,
  stdoutIsTty: process.stdout.isTTY === true,
  interrupted: interrupt.signal,
});

async function readStdin(): Promise<string | undefined> {
  if (process.stdin.isTTY) return undefined;
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}
