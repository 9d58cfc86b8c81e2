import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { type Receiver, readTestSettings, startReceiver } from "@hookline/testkit";
import { startTestService, type TestService } from "./test-helpers.js";

const settings = readTestSettings(process.env);

const run = promisify(execFile);
const PROTO_DIR = fileURLToPath(new URL("../../../proto", import.meta.url));
const CLIENT = fileURLToPath(new URL("../interop/watch_client.py", import.meta.url));

let svc: TestService;
let receiver: Receiver;
let stubs: string;
before(async () => {
  svc = await startTestService(settings);
  receiver = await startReceiver();
  stubs = await mkdtemp(join(tmpdir(), "hookline-py-"));
  // Only hookline/ is generated: a grpc/ package here would shadow grpcio itself.
  const files = (await readdir(join(PROTO_DIR, "hookline/v1"))).map((f) => `hookline/v1/${f}`);
  await run(
    "protoc",
    [
      `-I${PROTO_DIR}`,
      `--python_out=${stubs}`,
      `--grpc_python_out=${stubs}`,
      "--plugin=protoc-gen-grpc_python=/usr/bin/grpc_python_plugin",
      ...files,
    ],
    { cwd: PROTO_DIR },
  );
});
after(async () => {
  await receiver.close();
  await svc.close();
  await rm(stubs, { recursive: true, force: true });
});

test("a Python grpcio client watches attempts live and resumes after a disconnect with no gap or duplicate", async () => {
  // Debian's grpcio lives in the system interpreter; a python3 earlier on PATH may lack it.
  const { stdout } = await run("/usr/bin/python3", [CLIENT, svc.service.address, "py-watch", receiver.url], {
    env: { ...process.env, PYTHONPATH: stubs },
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
