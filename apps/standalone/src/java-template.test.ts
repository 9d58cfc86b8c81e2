import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);
const REPO = fileURLToPath(new URL("../../..", import.meta.url));
const BUF = fileURLToPath(new URL("../node_modules/.bin/buf", import.meta.url));

// No JVM in CI: this checks what a Java team gets from the README's command, the messages and the
// blocking, async and future stubs in the package the protos declare.
test("proto/buf.gen.java.yaml generates Java messages and gRPC stubs in com.hookline.v1", async () => {
  const out = await mkdtemp(join(tmpdir(), "hookline-java-"));
  try {
    await run(BUF, ["generate", "--template", "proto/buf.gen.java.yaml", "-o", out], { cwd: REPO }).catch(
      (error: Error & { stderr?: string }) => {
        throw new Error(
          `buf generate failed (needs apt-get install protobuf-compiler-grpc-java-plugin):\n${error.stderr ?? error.message}`,
        );
      },
    );
    const dir = join(out, "gen/java/com/hookline/v1");
    const stub = await readFile(join(dir, "AttemptLogServiceGrpc.java"), "utf8");
    assert.match(stub, /^package com\.hookline\.v1;$/m);
    assert.match(stub, /public static AttemptLogServiceBlockingStub newBlockingStub\(/);
    assert.match(stub, /"hookline\.v1\.AttemptLogService"/);
    const request = await readFile(join(dir, "WatchAttemptsRequest.java"), "utf8");
    assert.match(request, /public long getAfterAttemptId\(\)/);
  } finally {
    await rm(out, { recursive: true, force: true });
  }
});
