import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { type Receiver, readTestSettings, startReceiver } from "@hookline/testkit";
import { startTestService, type TestService } from "./test-helpers.js";

const settings = readTestSettings(process.env);

const run = promisify(execFile);
const REPO = fileURLToPath(new URL("../../..", import.meta.url));
const BUF = fileURLToPath(new URL("../node_modules/.bin/buf", import.meta.url));
const CLIENT = fileURLToPath(new URL("../interop/watch_client.py", import.meta.url));

let svc: TestService;
let receiver: Receiver;
let stubs: string;
before(async () => {
  svc = await startTestService(settings);
  receiver = await startReceiver();
  stubs = await mkdtemp(join(tmpdir(), "hookline-py-"));
  // The committed template, as the README tells Python users to run it (proto/hookline only: a
  // generated grpc/ package would shadow grpcio itself).
  await run(BUF, ["generate", "--template", "proto/buf.gen.python.yaml", "-o", stubs], { cwd: REPO });
});
after(async () => {
  await receiver.close();
  await svc.close();
  await rm(stubs, { recursive: true, force: true });
});

test("a Python grpcio client watches attempts live and resumes after a disconnect with no gap or duplicate", async () => {
  // Debian's grpcio lives in the system interpreter; a python3 earlier on PATH may lack it.
  const { stdout } = await run("/usr/bin/python3", [CLIENT, svc.service.address, "py-watch", receiver.url], {
    env: { ...process.env, PYTHONPATH: join(stubs, "gen/python") },
    timeout: 60_000,
  });
  const result = JSON.parse(stdout) as {
    first: { id: string; event_id: string }[];
    resumed: { id: string; event_id: string; status: number }[];
  };
  assert.deepEqual(
    result.first.map((a) => a.event_id),
    ["e1"],
  );
  assert.deepEqual(
    result.resumed.map((a) => a.event_id),
    ["e2", "e3", "e4"],
  );
  const ids = [...result.first, ...result.resumed].map((a) => BigInt(a.id));
  assert.deepEqual(
    ids,
    [...ids].sort((a, b) => (a < b ? -1 : 1)),
  );
  assert.ok(result.resumed.every((a) => a.status === 200));
});
