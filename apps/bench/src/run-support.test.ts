import assert from "node:assert/strict";
import { test } from "node:test";
import { processEnv, referenceEnv } from "./run-support.js";

const backendEnv = {
  DATABASE_URL: "postgres://postgres@127.0.0.1:5432/x",
  REDIS_URL: "redis://127.0.0.1:6379/0",
  BULLMQ_PREFIX: "tabc",
  HOOKLINE_ALLOWED_CIDRS: "127.0.0.1/32",
};

test("neither Hookline's processes nor the reference worker inherit the shell's environment", () => {
  const saved = process.env.NODE_OPTIONS;
  process.env.NODE_OPTIONS = "--max-semi-space-size=64";
  try {
    assert.equal(processEnv(backendEnv, { concurrency: undefined, env: {} }).NODE_OPTIONS, undefined);
    assert.equal(referenceEnv(backendEnv).NODE_OPTIONS, undefined);
  } finally {
    if (saved === undefined) delete process.env.NODE_OPTIONS;
    else process.env.NODE_OPTIONS = saved;
  }
});

test("the reference worker gets Hookline's base without Hookline's own variables", () => {
  assert.deepEqual(referenceEnv(backendEnv), {
    DATABASE_URL: backendEnv.DATABASE_URL,
    REDIS_URL: backendEnv.REDIS_URL,
    BULLMQ_PREFIX: backendEnv.BULLMQ_PREFIX,
  });
});
