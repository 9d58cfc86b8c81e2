import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { createTestBackend, readTestSettings } from "@hookline/testkit";

const settings = readTestSettings(process.env);

const DEMO = fileURLToPath(new URL("../dist/main.js", import.meta.url));

// One expected output for every backend: a line that differs between them fails the test.
const EXPECTED = `Hookline demo: one invoice.paid event to 4 endpoints
retry waits 50 ms, 100 ms, 200 ms (4 attempts at most), timeout 300 ms

Endpoints
  ep_a  healthy: 200
  ep_b  503 twice, then 200
  ep_c  never answers
  ep_d  410 Gone

Attempts
  endpoint  try  result      response
  ep_a      1    delivered   200 ok
  ep_b      1    will retry  503 busy
  ep_b      2    will retry  503 busy
  ep_b      3    delivered   200 ok
  ep_c      1    will retry  no response within 300 ms
  ep_c      2    will retry  no response within 300 ms
  ep_c      3    will retry  no response within 300 ms
  ep_c      4    failed      no response within 300 ms
  ep_d      1    cancelled   410 gone

Deliveries
  ep_a  delivered  after 1 attempt
  ep_b  delivered  after 3 attempts
  ep_c  failed     after 4 attempts
  ep_d  cancelled  after 1 attempt

Disabled endpoints
  ep_d  the endpoint answered 410 Gone

Receivers
  requests received    9 (ep_a 1, ep_b 3, ep_c 4, ep_d 1)
  signatures verified  9 of 9 (standardwebhooks, each endpoint's secret)
  distinct webhook-id  1 (the event id)
`;

test(`the demo prints the expected outcome (${settings.kind} backend)`, {
  timeout: 180_000,
}, async (t) => {
  const kind = settings.kind;
  const backend = kind === "servers" ? await createTestBackend(settings, "servers") : undefined;
  try {
    const env: NodeJS.ProcessEnv = { ...process.env, ...backend?.env };
    // Embedded: the demo must not pick up servers from the caller's environment.
    if (!backend) for (const name of ["DATABASE_URL", "REDIS_URL"]) delete env[name];
    const { code, stdout, stderr } = await runDemo(env, t.signal);
    assert.equal(stdout, EXPECTED, `stderr:\n${stderr}`);
    assert.equal(code, 0, `stderr:\n${stderr}`);
    const expectedBackend = kind === "servers" ? "an api and a worker process" : "one standalone process";
    assert.match(stderr, new RegExp(`backend: ${expectedBackend}`));
  } finally {
    await backend?.dispose();
  }
});

/** Runs the built demo; a test timeout SIGTERMs it, and the demo then stops its own processes. */
async function runDemo(env: NodeJS.ProcessEnv, signal: AbortSignal) {
  const child = spawn(process.execPath, [DEMO], { env, signal, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const [code] = (await once(child, "close")) as [number | null];
  return { code, stdout, stderr };
}
