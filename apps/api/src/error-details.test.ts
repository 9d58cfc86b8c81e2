import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { fromBinary } from "@bufbuild/protobuf";
import { BinaryReader } from "@bufbuild/protobuf/wire";
import { AnySchema, anyUnpack } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import type * as grpc from "@grpc/grpc-js";
import { status } from "@grpc/grpc-js";
import { BadRequestSchema, EmitService, EndpointService } from "@hookline/contracts";
import { readTestSettings } from "@hookline/testkit";
import { expectStatus, startTestApi, type TestApi, uniqueTenant } from "./test-helpers.js";

const settings = readTestSettings(process.env);

/** The BadRequest details inside a grpc-status-details-bin value (a google.rpc.Status). */
function badRequestsIn(statusBytes: Uint8Array) {
  const reader = new BinaryReader(statusBytes);
  const found = [];
  while (reader.pos < reader.len) {
    const [field, wireType] = reader.tag();
    // google.rpc.Status: code = 1, message = 2, repeated google.protobuf.Any details = 3.
    if (field !== 3) {
      reader.skip(wireType);
      continue;
    }
    const detail = anyUnpack(fromBinary(AnySchema, reader.bytes()), BadRequestSchema);
    if (detail) found.push(detail);
  }
  return found;
}

describe("validation errors carry a google.rpc.BadRequest detail", () => {
  let api: TestApi;
  before(async () => {
    api = await startTestApi(settings);
  });
  after(() => api?.close());

  for (const [name, transport] of [
    ["gRPC", createGrpcTransport] as const,
    ["Connect", createConnectTransport] as const,
  ]) {
    test(`a Connect client over ${name} finds the field with findDetails(BadRequestSchema)`, async () => {
      const client = createClient(
        EmitService,
        transport({ baseUrl: `http://${api.address}`, httpVersion: name === "gRPC" ? "2" : "1.1" }),
      );
      const error = await client
        .emit({ tenantId: uniqueTenant("details"), eventType: "t", dataJson: "{nope" })
        .then(
          () => assert.fail("the call succeeded"),
          (caught: unknown) => ConnectError.from(caught),
        );
      assert.equal(error.code, Code.InvalidArgument);
      assert.equal(error.rawMessage, "data_json is not valid JSON");
      const [detail, ...more] = error.findDetails(BadRequestSchema);
      assert.deepEqual(more, []);
      assert.deepEqual(
        detail?.fieldViolations.map(({ field, description }) => ({ field, description })),
        [{ field: "data_json", description: "data_json is not valid JSON" }],
      );
    });
  }

  test("a stock grpc-js client receives the detail in the grpc-status-details-bin trailer", async () => {
    const error = await expectStatus(api.call("ListEndpoints", {}), status.INVALID_ARGUMENT, "tenant_id");
    const [bytes, ...more] = (error as grpc.ServiceError).metadata.get("grpc-status-details-bin");
    assert.ok(Buffer.isBuffer(bytes), "grpc-status-details-bin is present");
    assert.deepEqual(more, []);
    const [detail] = badRequestsIn(bytes);
    assert.equal(detail?.fieldViolations[0]?.field, "tenant_id");
    assert.match(detail?.fieldViolations[0]?.description ?? "", /tenant_id/);
  });

  test("a malformed secret and a foreign page token name their fields too", async () => {
    const endpoints = createClient(
      EndpointService,
      createConnectTransport({ baseUrl: `http://${api.address}`, httpVersion: "1.1" }),
    );
    const tenant = uniqueTenant("details");
    const fieldsOf = (promise: Promise<unknown>) =>
      promise.then(
        () => assert.fail("the call succeeded"),
        (caught: unknown) =>
          ConnectError.from(caught)
            .findDetails(BadRequestSchema)
            .flatMap((d) => d.fieldViolations.map((v) => v.field)),
      );
    assert.deepEqual(
      await fieldsOf(endpoints.createEndpoint({ tenantId: tenant, url: "https://a.test/", secret: "nope" })),
      ["secret"],
    );
    assert.deepEqual(await fieldsOf(endpoints.listEndpoints({ tenantId: tenant, pageToken: "nope" })), [
      "page_token",
    ]);
  });

  test("Connect JSON from curl shows the detail beside code and message", async () => {
    const response = await fetch(`http://${api.address}/hookline.v1.EmitService/Emit`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ eventType: "t", dataJson: "{}" }),
    });
    assert.equal(response.status, 400);
    const body = (await response.json()) as {
      code: string;
      message: string;
      details?: { type: string; value: string }[];
    };
    assert.equal(body.code, "invalid_argument");
    assert.match(body.message, /tenant_id/);
    const [detail] = body.details ?? [];
    assert.equal(detail?.type, "google.rpc.BadRequest");
    const decoded = fromBinary(BadRequestSchema, Buffer.from(detail?.value ?? "", "base64"));
    assert.equal(decoded.fieldViolations[0]?.field, "tenant_id");
  });
});
