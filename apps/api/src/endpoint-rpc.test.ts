import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { status } from "@grpc/grpc-js";
import { readTestSettings } from "@hookline/testkit";
import { expectStatus, startTestApi, type TestApi, uniqueTenant } from "./test-helpers.js";

const settings = readTestSettings(process.env);

describe("EndpointService over gRPC", () => {
  let api: TestApi;
  before(async () => {
    api = await startTestApi(settings);
  });
  after(() => api?.close());

  test("CreateEndpoint generates an id and a whsec_ secret; GetEndpoint returns the same endpoint", async () => {
    const tenant = uniqueTenant("crud");
    const { endpoint } = await api.call("CreateEndpoint", {
      tenant_id: tenant,
      url: "https://example.com/hooks",
      description: "orders",
      event_types: ["order.created", "order.paid"],
    });
    assert.match(endpoint.id, /^ep_/);
    assert.match(endpoint.secret, /^whsec_[A-Za-z0-9+/]+={0,2}$/);
    assert.ok(Buffer.from(endpoint.secret.slice("whsec_".length), "base64").length >= 24);
    assert.equal(endpoint.tenant_id, tenant);
    assert.equal(endpoint.url, "https://example.com/hooks");
    assert.deepEqual(endpoint.event_types, ["order.created", "order.paid"]);
    assert.equal(endpoint.status, "ENDPOINT_STATUS_ENABLED");
    assert.equal(endpoint.disabled_reason, "");
    assert.ok(Number(endpoint.created_at?.seconds) > 0);

    const got = await api.call("GetEndpoint", { tenant_id: tenant, id: endpoint.id });
    assert.deepEqual(got.endpoint, endpoint);
  });

  test("a caller-chosen id and secret are kept; the same id in another tenant is another endpoint", async () => {
    const secret = `whsec_${Buffer.alloc(32, 7).toString("base64")}`;
    const a = uniqueTenant("a");
    const b = uniqueTenant("b");
    await api.call("CreateEndpoint", { tenant_id: a, id: "acct:7", url: "http://a.test/", secret });
    await api.call("CreateEndpoint", { tenant_id: b, id: "acct:7", url: "http://b.test/" });
    const inA = await api.call("GetEndpoint", { tenant_id: a, id: "acct:7" });
    const inB = await api.call("GetEndpoint", { tenant_id: b, id: "acct:7" });
    assert.equal(inA.endpoint.secret, secret);
    assert.equal(inA.endpoint.url, "http://a.test/");
    assert.equal(inB.endpoint.url, "http://b.test/");
    assert.notEqual(inB.endpoint.secret, secret);
  });

  test("ListEndpoints pages in creation order with keyset tokens, unaffected by inserts", async () => {
    const tenant = uniqueTenant("list");
    const created: string[] = [];
    for (let i = 0; i < 5; i++) {
      const { endpoint } = await api.call("CreateEndpoint", {
        tenant_id: tenant,
        url: `https://h.test/${i}`,
      });
      created.push(endpoint.id);
    }
    const first = await api.call("ListEndpoints", { tenant_id: tenant, page_size: 2 });
    assert.deepEqual(
      first.endpoints.map((e) => e.id),
      created.slice(0, 2),
    );
    assert.notEqual(first.next_page_token, "");
    assert.ok(
      first.endpoints.every((e) => e.secret === ""),
      "lists leave secrets out",
    );

    // A row added after the first page appears at the end, not shifting the next page.
    const { endpoint: late } = await api.call("CreateEndpoint", {
      tenant_id: tenant,
      url: "https://h.test/late",
    });
    created.push(late.id);
    const seen = first.endpoints.map((e) => e.id);
    let token = first.next_page_token;
    let pages = 1;
    while (token !== "") {
      const page = await api.call("ListEndpoints", { tenant_id: tenant, page_size: 2, page_token: token });
      seen.push(...page.endpoints.map((e) => e.id));
      token = page.next_page_token;
      pages++;
    }
    assert.deepEqual(seen, created);
    assert.equal(pages, 3);

    const all = await api.call("ListEndpoints", { tenant_id: tenant });
    assert.deepEqual(
      all.endpoints.map((e) => e.id),
      created,
    );
    assert.equal(all.next_page_token, "", "the default page size holds them all: no next page");
    const other = await api.call("ListEndpoints", { tenant_id: uniqueTenant("empty") });
    assert.deepEqual(other, { endpoints: [], next_page_token: "" });
  });

  test("UpdateEndpoint changes only the fields that are set", async () => {
    const tenant = uniqueTenant("update");
    const { endpoint } = await api.call("CreateEndpoint", {
      tenant_id: tenant,
      url: "https://old.test/",
      description: "before",
      event_types: ["a.b"],
    });

    const urlOnly = await api.call("UpdateEndpoint", {
      tenant_id: tenant,
      id: endpoint.id,
      url: "https://new.test/",
    });
    assert.equal(urlOnly.endpoint.url, "https://new.test/");
    assert.equal(urlOnly.endpoint.description, "before");
    assert.deepEqual(urlOnly.endpoint.event_types, ["a.b"]);
    assert.equal(urlOnly.endpoint.secret, endpoint.secret);
    assert.deepEqual(urlOnly.endpoint.created_at, endpoint.created_at);

    // event_types without replace_event_types is refused, not dropped while the call succeeds,
    // and nothing else in the call is applied.
    await expectStatus(
      api.call("UpdateEndpoint", {
        tenant_id: tenant,
        id: endpoint.id,
        description: "",
        event_types: ["x.y"],
      }),
      status.INVALID_ARGUMENT,
      "replace_event_types",
    );
    // A set empty description clears it.
    const cleared = await api.call("UpdateEndpoint", { tenant_id: tenant, id: endpoint.id, description: "" });
    assert.equal(cleared.endpoint.description, "");
    assert.deepEqual(cleared.endpoint.event_types, ["a.b"]);

    const replaced = await api.call("UpdateEndpoint", {
      tenant_id: tenant,
      id: endpoint.id,
      event_types: ["x.y", "z.w"],
      replace_event_types: true,
    });
    assert.deepEqual(replaced.endpoint.event_types, ["x.y", "z.w"]);
    const everyType = await api.call("UpdateEndpoint", {
      tenant_id: tenant,
      id: endpoint.id,
      replace_event_types: true,
    });
    assert.deepEqual(everyType.endpoint.event_types, []);

    const disabled = await api.call("UpdateEndpoint", {
      tenant_id: tenant,
      id: endpoint.id,
      status: "ENDPOINT_STATUS_DISABLED",
    });
    assert.equal(disabled.endpoint.status, "ENDPOINT_STATUS_DISABLED");
    assert.notEqual(disabled.endpoint.disabled_reason, "");
    assert.equal(disabled.endpoint.url, "https://new.test/");
    const enabled = await api.call("UpdateEndpoint", {
      tenant_id: tenant,
      id: endpoint.id,
      status: "ENDPOINT_STATUS_ENABLED",
    });
    assert.equal(enabled.endpoint.status, "ENDPOINT_STATUS_ENABLED");
    assert.equal(enabled.endpoint.disabled_reason, "");

    const stored = await api.call("GetEndpoint", { tenant_id: tenant, id: endpoint.id });
    // Only GetEndpoint reads the queue's limit: the adaptive start, written as the URL moved to
    // another server.
    const { current_max_in_flight, _current_max_in_flight, ...rest } = stored.endpoint;
    assert.equal(current_max_in_flight, 4);
    assert.deepEqual(rest, enabled.endpoint);
  });

  test("DeleteEndpoint removes it: then Get, Update and Delete answer NOT_FOUND", async () => {
    const tenant = uniqueTenant("delete");
    const { endpoint } = await api.call("CreateEndpoint", { tenant_id: tenant, url: "https://gone.test/" });
    assert.deepEqual(await api.call("DeleteEndpoint", { tenant_id: tenant, id: endpoint.id }), {});
    await expectStatus(
      api.call("GetEndpoint", { tenant_id: tenant, id: endpoint.id }),
      status.NOT_FOUND,
      endpoint.id,
    );
    await expectStatus(
      api.call("UpdateEndpoint", { tenant_id: tenant, id: endpoint.id, description: "x" }),
      status.NOT_FOUND,
      endpoint.id,
    );
    await expectStatus(api.call("DeleteEndpoint", { tenant_id: tenant, id: endpoint.id }), status.NOT_FOUND);
    const list = await api.call("ListEndpoints", { tenant_id: tenant });
    assert.deepEqual(list.endpoints, []);
    // The id is free again.
    const again = await api.call("CreateEndpoint", {
      tenant_id: tenant,
      id: endpoint.id,
      url: "https://back.test/",
    });
    assert.equal(again.endpoint.url, "https://back.test/");
  });
});
