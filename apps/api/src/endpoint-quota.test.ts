import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { status } from "@grpc/grpc-js";
import { readTestSettings } from "@hookline/testkit";
import { expectStatus, startTestApi, type TestApi, uniqueTenant } from "./test-helpers.js";

const settings = readTestSettings(process.env);

let api: TestApi;
before(async () => {
  api = await startTestApi(settings, { HOOKLINE_MAX_ENDPOINTS_PER_TENANT: "3" });
});
after(() => api.close());

const create = (tenant: string, id: string) =>
  api.call("CreateEndpoint", { tenant_id: tenant, id, url: "https://quota.test/" });

test("a tenant at HOOKLINE_MAX_ENDPOINTS_PER_TENANT is answered RESOURCE_EXHAUSTED; others are not", async () => {
  const tenant = uniqueTenant("quota");
  for (const id of ["a", "b", "c"]) await create(tenant, id);
  await expectStatus(create(tenant, "d"), status.RESOURCE_EXHAUSTED, "the limit of 3 endpoints per tenant");
  await expectStatus(api.call("GetEndpoint", { tenant_id: tenant, id: "d" }), status.NOT_FOUND);
  await create(uniqueTenant("other"), "a");
  // Deleting one makes room again.
  await api.call("DeleteEndpoint", { tenant_id: tenant, id: "a" });
  await create(tenant, "d");
  const { endpoints } = await api.call("ListEndpoints", { tenant_id: tenant });
  assert.deepEqual(endpoints.map((e) => e.id).sort(), ["b", "c", "d"]);
});

test("concurrent creates cannot overshoot the quota together", async () => {
  const tenant = uniqueTenant("race");
  const results = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => create(tenant, `ep-${i}`)));
  assert.equal(results.filter((r) => r.status === "fulfilled").length, 3);
  for (const r of results) {
    if (r.status === "rejected") assert.equal((r.reason as { code: number }).code, status.RESOURCE_EXHAUSTED);
  }
  const { endpoints } = await api.call("ListEndpoints", { tenant_id: tenant });
  assert.equal(endpoints.length, 3);
});
