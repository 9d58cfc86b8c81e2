import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { readTestSettings } from "@hookline/testkit";
import { assertNoInternals, startTestApi, type TestApi, uniqueTenant } from "./test-helpers.js";

const settings = readTestSettings(process.env);

describe("Connect JSON over HTTP/1.1 on the gRPC port", () => {
  let api: TestApi;
  before(async () => {
    api = await startTestApi(settings);
  });
  after(() => api?.close());

  /** What `curl -H 'content-type: application/json' -d ...` does. */
  async function post(
    path: string,
    body: string | Uint8Array,
  ): Promise<{ status: number; type: string; json: unknown }> {
    const response = await fetch(`http://${api.address}/hookline.v1.${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    });
    return {
      status: response.status,
      type: response.headers.get("content-type") ?? "",
      json: await response.json(),
    };
  }

  test("Emit and GetEvent answer JSON, and agree with the gRPC side", async () => {
    const tenant = uniqueTenant("json");
    const { endpoint } = await api.call("CreateEndpoint", { tenant_id: tenant, url: "https://json.test/" });
    const request = {
      tenantId: tenant,
      eventId: "order:42",
      eventType: "order.created",
      dataJson: '{"n":1}',
    };

    const first = await post("EmitService/Emit", JSON.stringify(request));
    assert.equal(first.status, 200);
    assert.match(first.type, /^application\/json/);
    const emitted = first.json as { eventId: string; deliveryIds: string[]; duplicate?: boolean };
    assert.equal(emitted.eventId, "order:42");
    assert.equal(emitted.deliveryIds.length, 1);
    assert.notEqual(emitted.duplicate, true);

    const again = await post("EmitService/Emit", JSON.stringify(request));
    assert.deepEqual(again.json, { eventId: "order:42", deliveryIds: emitted.deliveryIds, duplicate: true });

    const viaGrpc = await api.call("GetEvent", { tenant_id: tenant, event_id: "order:42" });
    assert.equal(viaGrpc.event.data_json, '{"n":1}');
    assert.deepEqual(
      viaGrpc.deliveries.map((d) => [d.id, d.endpoint_id]),
      [[emitted.deliveryIds[0], endpoint.id]],
    );

    const got = await post(
      "EmitService/GetEvent",
      JSON.stringify({ tenant_id: tenant, event_id: "order:42" }),
    );
    assert.equal(got.status, 200, "the proto field names are accepted too");
    const body = got.json as {
      event: { dataJson: string; eventType: string };
      deliveries: { status: string }[];
    };
    assert.equal(body.event.dataJson, '{"n":1}');
    assert.equal(body.event.eventType, "order.created");
    assert.deepEqual(
      body.deliveries.map((d) => d.status),
      ["DELIVERY_STATUS_PENDING"],
    );
  });

  test("endpoint RPCs work over JSON too", async () => {
    const tenant = uniqueTenant("json-ep");
    const created = await post(
      "EndpointService/CreateEndpoint",
      JSON.stringify({ tenantId: tenant, url: "http://a.test/" }),
    );
    assert.equal(created.status, 200);
    const endpoint = (created.json as { endpoint: { id: string; secret: string; status: string } }).endpoint;
    assert.match(endpoint.secret, /^whsec_/);
    assert.equal(endpoint.status, "ENDPOINT_STATUS_ENABLED");
    const listed = await api.call("ListEndpoints", { tenant_id: tenant });
    assert.deepEqual(
      listed.endpoints.map((e) => e.id),
      [endpoint.id],
    );
  });

  test("a refused request answers a Connect error body with code invalid_argument", async () => {
    const refused = await post("EmitService/Emit", JSON.stringify({ eventType: "t", dataJson: "{}" }));
    assert.equal(refused.status, 400);
    const error = refused.json as { code: string; message: string };
    assert.equal(error.code, "invalid_argument");
    assert.match(error.message, /tenant_id/);
    assertNoInternals(error.message);

    const notJson = await post(
      "EmitService/Emit",
      JSON.stringify({ tenantId: uniqueTenant("j"), eventType: "t", dataJson: "{oops" }),
    );
    assert.equal(notJson.status, 400);
    const { details, ...status } = notJson.json as { details?: { type: string }[] };
    assert.deepEqual(status, { code: "invalid_argument", message: "data_json is not valid JSON" });
    assert.deepEqual(
      details?.map((d) => d.type),
      ["google.rpc.BadRequest"],
    );
  });

  test("unknown ids answer not_found; a body that is not JSON answers invalid_argument", async () => {
    const missing = await post("EmitService/GetEvent", JSON.stringify({ tenantId: "t", eventId: "nope" }));
    assert.equal(missing.status, 404);
    assert.equal((missing.json as { code: string }).code, "not_found");

    const garbage = await post("EmitService/Emit", "{this is not json");
    assert.equal(garbage.status, 400);
    const error = garbage.json as { code: string; message: string };
    assert.equal(error.code, "invalid_argument");
    assertNoInternals(error.message);
  });

  test("a malformed timestamp, duration or enum is refused naming its field", async () => {
    const tenant = uniqueTenant("wkt");
    const cases: [string, object, string][] = [
      ["EndpointService/RecoverEndpoint", { tenantId: tenant, id: "ep", since: "yesterday" }, "since"],
      [
        "AttemptLogService/ListDeliveries",
        { tenantId: tenant, createdFrom: "2026-01-01T00:00:00Z", createdUntil: "2026-13-01T00:00:00Z" },
        "created_until",
      ],
      [
        "EndpointService/RotateEndpointSecret",
        { tenantId: tenant, id: "ep", grace_period: "31d" },
        "grace_period",
      ],
      ["AttemptLogService/ListDeliveries", { tenantId: tenant, status: "DELIVERED" }, "status"],
    ];
    for (const [path, request, field] of cases) {
      const refused = await post(path, JSON.stringify(request));
      assert.equal(refused.status, 400, path);
      const { code, message, details } = refused.json as {
        code: string;
        message: string;
        details?: { type: string }[];
      };
      assert.equal(code, "invalid_argument");
      assert.match(
        message,
        new RegExp(`^${field} is not a valid (Timestamp|Duration|DeliveryStatus): `),
        path,
      );
      assert.deepEqual(
        details?.map((d) => d.type),
        ["google.rpc.BadRequest"],
      );
    }
    const status = await post("AttemptLogService/ListDeliveries", JSON.stringify({ status: "DELIVERED" }));
    assert.match(
      (status.json as { message: string }).message,
      /\(one of DELIVERY_STATUS_UNSPECIFIED, .*DELIVERY_STATUS_DELIVERED/,
      "the values it may take",
    );
  });

  test("a value of the wrong JSON type, or an unknown key, is refused naming the field in a BadRequest", async () => {
    const tenant = uniqueTenant("types");
    const cases: [string, object, string, RegExp][] = [
      [
        "EndpointService/CreateEndpoint",
        { tenantId: [tenant], url: "https://types.test/" },
        "tenant_id",
        /^tenant_id is not valid: expected string/,
      ],
      [
        "AttemptLogService/ListAttempts",
        { tenantId: tenant, pageSize: "abc" },
        "page_size",
        /^page_size is not valid: /,
      ],
      [
        "EndpointService/CreateEndpoint",
        { tenantId: tenant, url: "https://types.test/", bogus: 1 },
        "bogus",
        /^bogus is not a field of CreateEndpointRequest$/,
      ],
    ];
    for (const [path, request, field, message] of cases) {
      const refused = await post(path, JSON.stringify(request));
      const error = refused.json as {
        code: string;
        message: string;
        details?: { type: string; debug?: { fieldViolations?: { field: string }[] } }[];
      };
      assert.deepEqual([refused.status, error.code], [400, "invalid_argument"], path);
      assert.match(error.message, message, path);
      assertNoInternals(error.message);
      assert.deepEqual(
        error.details?.map((d) => d.type),
        ["google.rpc.BadRequest"],
        path,
      );
      assert.equal(error.details?.[0]?.debug?.fieldViolations?.[0]?.field, field, path);
    }
    const { endpoints } = await api.call("ListEndpoints", { tenant_id: tenant });
    assert.deepEqual(endpoints, [], "nothing was written");
  });

  test("a data_json within its limit is accepted however much its JSON escapes lengthen the body", async () => {
    const tenant = uniqueTenant("escaped");
    // 262,142 bytes of data_json, all '<': Go's encoding/json sends each as \u003c, six bytes.
    const dataJson = JSON.stringify("<".repeat(262_140));
    const body = JSON.stringify({ tenantId: tenant, eventId: "e", eventType: "t", dataJson }).replaceAll(
      "<",
      "\\u003c",
    );
    assert.ok(Buffer.byteLength(dataJson) <= 262_144 && body.length > 1_500_000);

    const emitted = await post("EmitService/Emit", body);
    assert.equal(emitted.status, 200, JSON.stringify(emitted.json));
    const stored = await post("EmitService/GetEvent", JSON.stringify({ tenantId: tenant, eventId: "e" }));
    assert.equal((stored.json as { event: { dataJson: string } }).event.dataJson, dataJson);
  });

  test("a body that is not UTF-8 is refused, not stored with its bytes replaced", async () => {
    const tenant = uniqueTenant("utf8");
    const bytes = Buffer.concat([
      Buffer.from(`{"tenantId":"${tenant}","eventId":"e","eventType":"t","dataJson":""`),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('""}'),
    ]);

    const refused = await post("EmitService/Emit", bytes);
    assert.equal(refused.status, 400);
    assert.deepEqual(refused.json, {
      code: "invalid_argument",
      message: "the request body is not valid UTF-8",
    });
    const missing = await post("EmitService/GetEvent", JSON.stringify({ tenantId: tenant, eventId: "e" }));
    assert.equal(missing.status, 404, "nothing was stored");
  });
});
