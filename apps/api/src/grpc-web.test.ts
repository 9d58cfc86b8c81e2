import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createClient } from "@connectrpc/connect";
import { createGrpcWebTransport } from "@connectrpc/connect-node";
import { EmitService, EndpointService, Health, HealthCheckResponse_ServingStatus } from "@hookline/contracts";
import { readTestSettings } from "@hookline/testkit";
import { startTestApi, type TestApi, uniqueTenant } from "./test-helpers.js";

const settings = readTestSettings(process.env);

describe("gRPC-Web on the gRPC port", () => {
  let api: TestApi;
  before(async () => {
    api = await startTestApi(settings);
  });
  after(() => api?.close());

  for (const httpVersion of ["1.1", "2"] as const) {
    test(`a Connect gRPC-Web client over HTTP/${httpVersion} creates, emits and reads back`, async () => {
      const transport = createGrpcWebTransport({ baseUrl: `http://${api.address}`, httpVersion });
      const endpoints = createClient(EndpointService, transport);
      const emit = createClient(EmitService, transport);
      const tenant = uniqueTenant("web");
      const { endpoint } = await endpoints.createEndpoint({ tenantId: tenant, url: "https://web.test/" });
      const emitted = await emit.emit({ tenantId: tenant, eventType: "t", dataJson: '{"via":"grpc-web"}' });
      assert.equal(emitted.deliveryIds.length, 1);

      // What was written over gRPC-Web reads back over plain gRPC.
      const viaGrpc = await api.call("GetEvent", { tenant_id: tenant, event_id: emitted.eventId });
      assert.equal(viaGrpc.event.data_json, '{"via":"grpc-web"}');
      assert.deepEqual(
        viaGrpc.deliveries.map((d) => d.endpoint_id),
        [endpoint?.id],
      );
    });
  }

  test("a hand-made gRPC-Web request (what a browser proxy-less client sends) gets frames and trailers", async () => {
    // Health.Check with an empty request: one uncompressed frame of zero bytes.
    const response = await fetch(`http://${api.address}/grpc.health.v1.Health/Check`, {
      method: "POST",
      headers: { "content-type": "application/grpc-web+proto", "x-grpc-web": "1" },
      body: new Uint8Array([0, 0, 0, 0, 0]),
    });
    assert.equal(response.status, 200);
    assert.match(response.headers.get("content-type") ?? "", /^application\/grpc-web\+proto/);
    const body = Buffer.from(await response.arrayBuffer());
    // Data frame: flag 0, length, then HealthCheckResponse { status (1) = SERVING }.
    assert.equal(body[0], 0);
    const length = body.readUInt32BE(1);
    assert.deepEqual([...body.subarray(5, 5 + length)], [0x08, HealthCheckResponse_ServingStatus.SERVING]);
    // Trailer frame: flag 0x80, then HTTP/1-style header lines.
    const trailer = body.subarray(5 + length);
    assert.equal(trailer[0], 0x80);
    assert.match(trailer.subarray(5).toString(), /grpc-status: ?0/);

    const client = createClient(
      Health,
      createGrpcWebTransport({ baseUrl: `http://${api.address}`, httpVersion: "1.1" }),
    );
    assert.equal((await client.check({})).status, HealthCheckResponse_ServingStatus.SERVING);
  });
});
