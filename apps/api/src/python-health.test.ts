import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { copyFile, mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { readTestSettings } from "@hookline/testkit";
import { PROTO_DIR, startTestApi, type TestApi } from "./test-helpers.js";

const settings = readTestSettings(process.env);

const run = promisify(execFile);
// Debian's grpcio lives in the system interpreter; a python3 earlier on PATH may lack it.
const PYTHON = "/usr/bin/python3";
const CLIENT = fileURLToPath(new URL("../interop/health_client.py", import.meta.url));
const NEEDS = "apt-get install protobuf-compiler protobuf-compiler-grpc python3-grpcio python3-protobuf";

/**
 * Debian has no grpcio-health-checking, so generate its grpc_health.v1 modules from our copy of
 * health.proto. Like that package, put the file under grpc_health/: a generated `grpc` package
 * would shadow grpcio itself. The proto package, and so the wire names, stay grpc.health.v1.
 */
async function generateHealthStubs(outDir: string): Promise<void> {
  const sources = join(outDir, "proto");
  await mkdir(join(sources, "grpc_health", "v1"), { recursive: true });
  await copyFile(
    join(PROTO_DIR, "grpc/health/v1/health.proto"),
    join(sources, "grpc_health/v1/health.proto"),
  );
  try {
    await run("protoc", [
      `-I${sources}`,
      `--python_out=${outDir}`,
      `--grpc_python_out=${outDir}`,
      "--plugin=protoc-gen-grpc_python=/usr/bin/grpc_python_plugin",
      "grpc_health/v1/health.proto",
    ]);
  } catch (error) {
    throw new Error(`protoc failed (${NEEDS}): ${error instanceof Error ? error.message : error}`);
  }
}

describe("a Python grpcio client checks the api's health", () => {
  let api: TestApi;
  let stubs: string;
  before(async () => {
    stubs = await mkdtemp(join(tmpdir(), "hookline-py-health-"));
    await generateHealthStubs(stubs);
    api = await startTestApi(settings);
  });
  after(async () => {
    await api?.close();
    if (stubs) await rm(stubs, { recursive: true, force: true });
  });

  test("Check answers SERVING (NOT_FOUND for an unknown service) and Watch starts with SERVING", async () => {
    const { stdout } = await run(PYTHON, [CLIENT, api.address], {
      env: { ...process.env, PYTHONPATH: stubs, PYTHONDONTWRITEBYTECODE: "1" },
      timeout: 60_000,
    }).catch((error: Error & { stderr?: string }) => {
      throw new Error(`the Python client failed (needs ${NEEDS}):\n${error.stderr ?? error.message}`);
    });
    assert.deepEqual(JSON.parse(stdout), {
      check: { "": "SERVING", "hookline.v1.EmitService": "SERVING" },
      unknown: "NOT_FOUND",
      watch_first: "SERVING",
    });
  });
});
