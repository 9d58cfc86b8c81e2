import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { readTestSettings } from "@hookline/testkit";
import {
  assertNoInternals,
  PROTO_DIR,
  PROTO_FILES,
  startTestApi,
  type TestApi,
  uniqueTenant,
} from "./test-helpers.js";

const settings = readTestSettings(process.env);

const run = promisify(execFile);
// Debian's grpcio lives in the system interpreter; a python3 earlier on PATH may lack it.
const PYTHON = "/usr/bin/python3";
const CLIENT = fileURLToPath(new URL("../interop/hookline_client.py", import.meta.url));
const NEEDS = "apt-get install protobuf-compiler protobuf-compiler-grpc python3-grpcio python3-protobuf";

interface ErrorResult {
  code: string;
  message: string;
  /** The fields its google.rpc.BadRequest detail names. */
  fields: string[];
}
interface PythonResult {
  endpoint: {
    id: string;
    tenant_id: string;
    status: string;
    secret_prefix: string;
    event_types: string[];
    created_at_seconds: number;
  };
  emit: { event_id: string; delivery_ids: string[]; duplicate: boolean };
  event: { id: string; event_type: string; data_json: string; delivery_ids: string[] };
  deliveries: { id: string; event_id: string; endpoint_id: string; status: string }[];
  errors: { taken: ErrorResult; bad_json: ErrorResult; no_tenant: ErrorResult };
}

/**
 * Generates Python stubs for Hookline's protos with protoc and Debian's grpc_python_plugin, and the
 * google.rpc messages (Status, BadRequest), as the README shows.
 */
async function generateStubs(outDir: string): Promise<void> {
  try {
    await run(
      "protoc",
      [
        `-I${PROTO_DIR}`,
        `--python_out=${outDir}`,
        `--grpc_python_out=${outDir}`,
        "--plugin=protoc-gen-grpc_python=/usr/bin/grpc_python_plugin",
        ...PROTO_FILES,
      ],
      { cwd: PROTO_DIR },
    );
    await run(
      "protoc",
      [
        `-I${PROTO_DIR}`,
        `--python_out=${outDir}`,
        "google/rpc/status.proto",
        "google/rpc/error_details.proto",
      ],
      { cwd: PROTO_DIR },
    );
  } catch (error) {
    throw new Error(`protoc failed (${NEEDS}): ${error instanceof Error ? error.message : error}`);
  }
}

describe("a Python grpcio client generated from proto/", () => {
  let api: TestApi;
  let stubs: string;
  before(async () => {
    stubs = await mkdtemp(join(tmpdir(), "hookline-py-"));
    await generateStubs(stubs);
    api = await startTestApi(settings);
  });
  after(async () => {
    await api?.close();
    if (stubs) await rm(stubs, { recursive: true, force: true });
  });

  test("creates an endpoint, emits, reads the event and its deliveries, and sees status codes", async () => {
    const tenant = uniqueTenant("python");
    const { stdout } = await run(PYTHON, [CLIENT, api.address, tenant], {
      env: { ...process.env, PYTHONPATH: stubs, PYTHONDONTWRITEBYTECODE: "1" },
      timeout: 60_000,
    }).catch((error: Error & { stderr?: string }) => {
      throw new Error(`the Python client failed (needs ${NEEDS}):\n${error.stderr ?? error.message}`);
    });
    const result = JSON.parse(stdout) as PythonResult;

    assert.deepEqual(
      { ...result.endpoint, created_at_seconds: result.endpoint.created_at_seconds > 0 },
      {
        id: "py-endpoint",
        tenant_id: tenant,
        status: "ENDPOINT_STATUS_ENABLED",
        secret_prefix: "whsec_",
        event_types: ["order.created"],
        created_at_seconds: true,
      },
    );
    assert.equal(result.emit.event_id, "py:order-1");
    assert.equal(result.emit.duplicate, false);
    assert.equal(result.emit.delivery_ids.length, 1);
    const [deliveryId] = result.emit.delivery_ids;
    assert.deepEqual(result.event, {
      id: "py:order-1",
      event_type: "order.created",
      data_json: '{"from": "python"}',
      delivery_ids: [deliveryId],
    });
    assert.deepEqual(result.deliveries, [
      {
        id: deliveryId,
        event_id: "py:order-1",
        endpoint_id: "py-endpoint",
        status: "DELIVERY_STATUS_PENDING",
      },
    ]);

    assert.equal(result.errors.taken.code, "ALREADY_EXISTS");
    assert.match(result.errors.taken.message, /py-endpoint/);
    assert.equal(result.errors.bad_json.code, "INVALID_ARGUMENT");
    assert.match(result.errors.bad_json.message, /data_json/);
    assert.deepEqual(result.errors.bad_json.fields, ["data_json"], "the BadRequest detail names it");
    assert.equal(result.errors.no_tenant.code, "INVALID_ARGUMENT");
    assert.match(result.errors.no_tenant.message, /tenant_id/);
    for (const error of Object.values(result.errors)) assertNoInternals(error.message);

    // What Python wrote is what a grpc-js client reads back, and the refused calls wrote nothing.
    const listed = await api.call("ListEndpoints", { tenant_id: tenant });
    assert.deepEqual(
      listed.endpoints.map((e) => [e.id, e.url]),
      [["py-endpoint", "https://python.example/hooks"]],
    );
    const deliveries = await api.call("ListDeliveries", { tenant_id: tenant });
    assert.deepEqual(
      deliveries.deliveries.map((d) => d.id),
      [deliveryId],
    );
  });
});

/** The README's one Python snippet, as a reader would paste it. */
async function readmePythonSnippet(): Promise<string> {
  const readme = await readFile(join(PROTO_DIR, "..", "README.md"), "utf8");
  const snippet = /^```python\n([\s\S]*?)^```$/m.exec(readme)?.[1] ?? "";
  assert.ok(
    snippet.includes("127.0.0.1:50051"),
    "the README has a Python snippet calling the default address",
  );
  return snippet;
}

describe("the README's Python snippet, pasted as it is", () => {
  const TOKEN = "python-readme-token-0123456789";
  let api: TestApi;
  let stubs: string;
  before(async () => {
    stubs = await mkdtemp(join(tmpdir(), "hookline-py-readme-"));
    await generateStubs(stubs);
    api = await startTestApi(settings, { HOOKLINE_API_TOKENS: `tenant:acme:${TOKEN}` });
  });
  after(async () => {
    await api?.close();
    if (stubs) await rm(stubs, { recursive: true, force: true });
  });

  async function pasted(token: string): Promise<string> {
    const snippet = (await readmePythonSnippet()).replace("127.0.0.1:50051", api.address);
    const env = { ...process.env, PYTHONPATH: stubs, PYTHONDONTWRITEBYTECODE: "1", HOOKLINE_TOKEN: token };
    const { stdout } = await run(PYTHON, ["-c", snippet], { env, timeout: 60_000 }).catch(
      (error: Error & { stderr?: string }) => {
        throw new Error(`the README's Python snippet failed:\n${error.stderr ?? error.message}`);
      },
    );
    return stdout;
  }

  test("prints the field the call got wrong with the token, and the refusal's code without one", async () => {
    assert.equal(await pasted(TOKEN), "INVALID_ARGUMENT [('data_json', 'data_json is not valid JSON')]\n");
    assert.equal(await pasted(""), "UNAUTHENTICATED []\n");
    assert.equal(await pasted("not-the-token-0123456789"), "UNAUTHENTICATED []\n");
  });
});
