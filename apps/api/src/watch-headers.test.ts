import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { readTestSettings } from "@hookline/testkit";
import { PROTO_DIR, PROTO_FILES, startTestApi, type TestApi, uniqueTenant } from "./test-helpers.js";

const settings = readTestSettings(process.env);

type Watch = (request: object) => grpc.ClientReadableStream<unknown>;

function attemptLogClient(address: string): grpc.Client & { WatchAttempts: Watch } {
  const definition = protoLoader.loadSync(PROTO_FILES, {
    includeDirs: [PROTO_DIR],
    keepCase: true,
    longs: String,
  });
  const loaded = grpc.loadPackageDefinition(definition) as unknown as {
    hookline: { v1: { AttemptLogService: grpc.ServiceClientConstructor } };
  };
  const Client = loaded.hookline.v1.AttemptLogService;
  return new Client(address, grpc.credentials.createInsecure()) as unknown as grpc.Client & {
    WatchAttempts: Watch;
  };
}

/** Opens a stream and resolves with its response headers, failing if a message comes first. */
function headersOf(stream: grpc.ClientReadableStream<unknown>): Promise<grpc.Metadata> {
  return new Promise((resolve, reject) => {
    stream.once("metadata", resolve);
    stream.once("data", () => reject(new Error("a message arrived before the headers")));
    stream.once("error", reject);
  });
}

describe("WatchAttempts headers", () => {
  let api: TestApi;
  let client: ReturnType<typeof attemptLogClient>;
  before(async () => {
    api = await startTestApi(settings);
    client = attemptLogClient(api.address);
  });
  after(async () => {
    client?.close();
    await api?.close();
  });

  test("arrive over gRPC as soon as the stream is live, before any attempt, naming where it starts", async () => {
    // This api has no worker: no attempt will ever come, so only early headers can arrive.
    const fromNow = client.WatchAttempts({ tenant_id: uniqueTenant("quiet") });
    const headers = await headersOf(fromNow);
    fromNow.cancel();
    const [start] = headers.get("hookline-after-attempt-id");
    assert.match(String(start), /^\d+$/);
    assert.match(String(headers.get("content-type")[0]), /^application\/grpc/);

    const resumed = client.WatchAttempts({ tenant_id: uniqueTenant("quiet"), after_attempt_id: "12345" });
    const again = await headersOf(resumed);
    resumed.cancel();
    assert.deepEqual(again.get("hookline-after-attempt-id"), ["12345"]);
  });

  test("arrive over HTTP/1.1 (Connect streaming JSON) before any attempt", async () => {
    const body = Buffer.from(JSON.stringify({ tenantId: uniqueTenant("quiet"), afterAttemptId: "7" }));
    const envelope = Buffer.alloc(5 + body.length);
    envelope.writeUInt32BE(body.length, 1);
    body.copy(envelope, 5);
    const controller = new AbortController();
    // fetch resolves once the headers arrive; the body stays open.
    const response = await fetch(`http://${api.address}/hookline.v1.AttemptLogService/WatchAttempts`, {
      method: "POST",
      headers: { "content-type": "application/connect+json" },
      body: envelope,
      signal: controller.signal,
    });
    controller.abort();
    assert.equal(response.status, 200);
    assert.equal(response.headers.get("content-type"), "application/connect+json");
    assert.equal(response.headers.get("hookline-after-attempt-id"), "7");
  });

  test("a refused stream still answers with its status, not early headers", async () => {
    const stream = client.WatchAttempts({ tenant_id: uniqueTenant("quiet"), after_attempt_id: "-1" });
    const error = await new Promise<grpc.ServiceError>((resolve) => stream.once("error", resolve));
    assert.equal(error.code, grpc.status.INVALID_ARGUMENT);
    assert.match(error.details, /after_attempt_id/);
  });
});
