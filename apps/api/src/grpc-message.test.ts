import assert from "node:assert/strict";
import http2 from "node:http2";
import { after, before, describe, test } from "node:test";
import type { ServiceError } from "@grpc/grpc-js";
import { readTestSettings } from "@hookline/testkit";
import { encodeGrpcMessage } from "./grpc-message.js";
import { startTestApi, type TestApi, uniqueTenant } from "./test-helpers.js";

const settings = readTestSettings(process.env);

// "%", ",", a quote and text outside ASCII: what decodeURI (grpc-js) left escaped before.
const ID = `50% off, "café" ☕`;

describe("error messages on the wire", () => {
  let api: TestApi;
  before(async () => {
    api = await startTestApi(settings);
  });
  after(() => api?.close());

  test("a grpc-js client reads them exactly as the server wrote them", async () => {
    const error = (await api
      .call("GetEndpoint", { tenant_id: uniqueTenant("msg"), id: ID })
      .then(() => assert.fail("GetEndpoint found an endpoint that was never created"))
      .catch((e: unknown) => e)) as ServiceError;
    assert.equal(error.details, `endpoint "${ID}" not found`);
  });

  test("the grpc-message trailer escapes only % and bytes outside ASCII, so it reads plainly", async () => {
    const session = http2.connect(`http://${api.address}`);
    try {
      const body = Buffer.from(JSON.stringify({ tenantId: uniqueTenant("msg"), id: ID }));
      const frame = Buffer.alloc(5 + body.length);
      frame.writeUInt32BE(body.length, 1);
      body.copy(frame, 5);
      const stream = session.request({
        ":method": "POST",
        ":path": "/hookline.v1.EndpointService/GetEndpoint",
        "content-type": "application/grpc+json",
        te: "trailers",
      });
      const trailers = new Promise<http2.IncomingHttpHeaders>((resolve) => stream.once("trailers", resolve));
      stream.resume();
      stream.end(frame);
      const got = await trailers;
      assert.equal(got["grpc-status"], "5");
      assert.equal(got["grpc-message"], 'endpoint "50%25 off, "caf%C3%A9" %E2%98%95" not found');
    } finally {
      session.close();
    }
  });
});

test("encodeGrpcMessage round-trips through decodeURI and decodeURIComponent alike", () => {
  for (const text of [ID, "a%2Cb", "tab\there", "plain, with: reserved/chars?&=#"]) {
    const encoded = encodeGrpcMessage(text);
    assert.match(encoded, /^[\x20-\x7e]*$/);
    assert.equal(decodeURI(encoded), text);
    assert.equal(decodeURIComponent(encoded), text);
  }
});
