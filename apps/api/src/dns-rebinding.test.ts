import assert from "node:assert/strict";
import http from "node:http";
import { after, before, describe, test } from "node:test";
import * as grpc from "@grpc/grpc-js";
import { readTestSettings } from "@hookline/testkit";
import { expectStatus, startTestApi, type TestApi, uniqueTenant } from "./test-helpers.js";

const settings = readTestSettings(process.env);

/** A Connect JSON call as a browser page would send it, naming the host it was loaded from. */
function callNaming(
  api: TestApi,
  host: string,
  path: string,
  body: object,
): Promise<{ status: number; text: string }> {
  const [hostname, port] = api.address.split(":");
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        hostname,
        port: Number(port),
        method: "POST",
        path: `/hookline.v1.${path}`,
        headers: { host, origin: `http://${host}`, "content-type": "application/json" },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          text += chunk;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on("error", reject);
    req.end(payload);
  });
}

describe("without tokens, only calls addressed to a loopback name are answered", () => {
  let api: TestApi;
  before(async () => {
    api = await startTestApi(settings);
  });
  after(() => api?.close());

  test("a page that rebinds its name to 127.0.0.1 cannot read an endpoint's secret", async () => {
    const tenant = uniqueTenant("rebind");
    await api.call("CreateEndpoint", { tenant_id: tenant, id: "ep", url: "https://rebind.test/" });
    const port = api.address.split(":")[1];
    const request = { tenantId: tenant, id: "ep" };
    for (const host of [
      `attacker.example:${port}`,
      `127.0.0.1.attacker.example:${port}`,
      "localhost.attacker.example",
    ]) {
      const refused = await callNaming(api, host, "EndpointService/GetEndpoint", request);
      assert.equal(refused.status, 403, host);
      assert.match(refused.text, /permission_denied.*addressed to localhost, 127\.0\.0\.1 or \[::1\]/, host);
      assert.doesNotMatch(refused.text, /whsec_/, host);
    }
    for (const host of [
      `127.0.0.1:${port}`,
      `localhost:${port}`,
      `LOCALHOST:${port}`,
      `[::1]:${port}`,
      "127.0.0.2",
    ]) {
      const answered = await callNaming(api, host, "EndpointService/GetEndpoint", request);
      assert.equal(answered.status, 200, host);
      assert.match(answered.text, /"secret":"whsec_/, host);
    }
  });

  test("over gRPC, the :authority is what is checked", async () => {
    const client = new grpc.Client(api.address, grpc.credentials.createInsecure(), {
      "grpc.default_authority": "attacker.example",
    });
    try {
      const call = new Promise((resolve, reject) =>
        client.makeUnaryRequest(
          "/hookline.v1.EndpointService/ListEndpoints",
          () => Buffer.alloc(0),
          (bytes: Buffer) => bytes,
          {},
          (error, response) => (error ? reject(error) : resolve(response)),
        ),
      );
      await expectStatus(call, grpc.status.PERMISSION_DENIED, "addressed to localhost");
    } finally {
      client.close();
    }
  });
});

test("HOOKLINE_INSECURE_NO_AUTH=1 answers calls naming any host", async () => {
  const api = await startTestApi(settings, { HOOKLINE_INSECURE_NO_AUTH: "1" });
  try {
    const answered = await callNaming(api, "hookline.internal:50051", "EndpointService/ListEndpoints", {
      tenantId: uniqueTenant("any"),
    });
    assert.equal(answered.status, 200);
  } finally {
    await api.close();
  }
});
