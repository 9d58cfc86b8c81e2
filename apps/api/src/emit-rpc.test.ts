import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { status } from "@grpc/grpc-js";
import { jobIdFor, openQueueHandle } from "@hookline/queue";
import { readTestSettings } from "@hookline/testkit";
import { expectStatus, startTestApi, type TestApi, uniqueTenant } from "./test-helpers.js";

const settings = readTestSettings(process.env);

describe("EmitService over gRPC", () => {
  let api: TestApi;
  before(async () => {
    api = await startTestApi(settings);
  });
  after(() => api?.close());

  async function endpoint(tenant: string, id: string, eventTypes: string[] = []): Promise<string> {
    await api.call("CreateEndpoint", {
      tenant_id: tenant,
      id,
      url: `https://hooks.test/${encodeURIComponent(id)}`,
      event_types: eventTypes,
    });
    return id;
  }

  test("Emit creates one delivery per enabled endpoint whose types match or are empty", async () => {
    const tenant = uniqueTenant("fanout");
    await endpoint(tenant, "every-type");
    await endpoint(tenant, "orders", ["order.created", "order.paid"]);
    await endpoint(tenant, "users", ["user.created"]);
    await endpoint(tenant, "switched-off");
    await api.call("UpdateEndpoint", {
      tenant_id: tenant,
      id: "switched-off",
      status: "ENDPOINT_STATUS_DISABLED",
    });
    await endpoint(uniqueTenant("elsewhere"), "other-tenant");

    const emitted = await api.call("Emit", {
      tenant_id: tenant,
      event_id: "order-1",
      event_type: "order.created",
      data_json: '{"total": 12}',
    });
    assert.equal(emitted.event_id, "order-1");
    assert.equal(emitted.duplicate, false);
    assert.equal(emitted.delivery_ids.length, 2);

    const { event, deliveries } = await api.call("GetEvent", { tenant_id: tenant, event_id: "order-1" });
    assert.equal(event.id, "order-1");
    assert.equal(event.tenant_id, tenant);
    assert.equal(event.event_type, "order.created");
    assert.ok(Number(event.created_at?.seconds) > 0);
    assert.deepEqual(
      deliveries.map((d) => [d.id, d.endpoint_id, d.event_id, d.status, d.attempt_count]),
      [
        [emitted.delivery_ids[0], "every-type", "order-1", "DELIVERY_STATUS_PENDING", 0],
        [emitted.delivery_ids[1], "orders", "order-1", "DELIVERY_STATUS_PENDING", 0],
      ],
    );

    const unmatched = await api.call("Emit", {
      tenant_id: tenant,
      event_type: "invoice.sent",
      data_json: "null",
    });
    assert.equal(unmatched.delivery_ids.length, 1, "only the every-type endpoint takes invoice.sent");
  });

  test("an event with no matching endpoint is still recorded, with no deliveries", async () => {
    const tenant = uniqueTenant("lonely");
    const emitted = await api.call("Emit", {
      tenant_id: tenant,
      event_id: "e1",
      event_type: "a",
      data_json: "[]",
    });
    assert.deepEqual(emitted, { event_id: "e1", delivery_ids: [], duplicate: false });
    const got = await api.call("GetEvent", { tenant_id: tenant, event_id: "e1" });
    assert.equal(got.event.data_json, "[]");
    assert.deepEqual(got.deliveries, []);
  });

  test("re-emitting an event id answers duplicate with the original deliveries and writes nothing", async () => {
    const tenant = uniqueTenant("dup");
    await endpoint(tenant, "first");
    const data = '{ "kept":  "exactly as sent", "emoji": "\u00e9\u2713" }';
    const original = await api.call("Emit", {
      tenant_id: tenant,
      event_id: "evt-7",
      event_type: "t.a",
      data_json: data,
    });
    await endpoint(tenant, "added-later");

    const again = await api.call("Emit", {
      tenant_id: tenant,
      event_id: "evt-7",
      event_type: "t.b",
      data_json: '{"changed": true}',
    });
    assert.deepEqual(again, { event_id: "evt-7", delivery_ids: original.delivery_ids, duplicate: true });

    const { event, deliveries } = await api.call("GetEvent", { tenant_id: tenant, event_id: "evt-7" });
    assert.equal(event.event_type, "t.a");
    assert.equal(event.data_json, data, "data_json comes back byte for byte");
    assert.deepEqual(
      deliveries.map((d) => d.id),
      original.delivery_ids,
    );
    const listed = await api.call("ListDeliveries", { tenant_id: tenant });
    assert.equal(listed.deliveries.length, 1);

    // The same event id in another tenant is another event.
    const otherTenant = uniqueTenant("dup-other");
    const other = await api.call("Emit", {
      tenant_id: otherTenant,
      event_id: "evt-7",
      event_type: "t.a",
      data_json: "1",
    });
    assert.equal(other.duplicate, false);
  });

  test("a duplicate Emit adds no job, even once the first attempt's job is gone", async () => {
    // A worker records an attempt just after its job ends and is removed: a job added again in
    // between would send the attempt a second time with only one row to show for it. A lost
    // first add is the sweeper's to heal, which waits out that gap.
    const tenant = uniqueTenant("dup-job");
    await endpoint(tenant, "ep");
    const request = { tenant_id: tenant, event_id: "e", event_type: "t", data_json: "{}" };
    const [deliveryId = ""] = (await api.call("Emit", request)).delivery_ids;
    const ref = { tenantId: tenant, endpointId: "ep" };
    const queue = openQueueHandle(api.infra.queueBackend, api.infra.producer.routing.queueOf(ref));
    try {
      assert.ok(await api.infra.producer.hasLiveJob(ref, deliveryId, 1), "the first Emit queued attempt 1");
      await (await queue.getJob(jobIdFor(deliveryId, 1)))?.remove();
      assert.equal((await api.call("Emit", request)).duplicate, true);
      assert.equal(await api.infra.producer.hasLiveJob(ref, deliveryId, 1), false);
    } finally {
      await queue.close();
    }
  });

  test("concurrent emits of one event id record it once; every answer names the same deliveries", async () => {
    const tenant = uniqueTenant("race");
    await endpoint(tenant, "r1");
    await endpoint(tenant, "r2");
    const request = { tenant_id: tenant, event_id: "once", event_type: "t", data_json: "{}" };
    const answers = await Promise.all(Array.from({ length: 6 }, () => api.call("Emit", request)));
    assert.equal(answers.filter((a) => !a.duplicate).length, 1);
    const [first] = answers;
    for (const answer of answers) assert.deepEqual(answer.delivery_ids, first?.delivery_ids);
    const listed = await api.call("ListDeliveries", { tenant_id: tenant });
    assert.equal(listed.deliveries.length, 2);
  });

  test("ids with ':' work, and delivery ids are distinct, ':'-free and never collide", async () => {
    const tenant = uniqueTenant("ids");
    await endpoint(tenant, "acct:7");
    await endpoint(tenant, "customer");
    await endpoint(tenant, "1-customer");
    const colon = await api.call("Emit", {
      tenant_id: tenant,
      event_id: "order:1001",
      event_type: "x",
      data_json: "{}",
    });
    const dash = await api.call("Emit", {
      tenant_id: tenant,
      event_id: "order-1",
      event_type: "x",
      data_json: "{}",
    });
    const plain = await api.call("Emit", {
      tenant_id: tenant,
      event_id: "order",
      event_type: "x",
      data_json: "{}",
    });
    const ids = [...colon.delivery_ids, ...dash.delivery_ids, ...plain.delivery_ids];
    assert.equal(ids.length, 9);
    assert.equal(new Set(ids).size, 9, "every (event, endpoint) pair has its own delivery id");
    for (const id of ids) {
      assert.doesNotMatch(id, /:/);
      assert.doesNotMatch(id, /^\d+$/);
    }
    const got = await api.call("GetEvent", { tenant_id: tenant, event_id: "order:1001" });
    assert.deepEqual(got.deliveries.map((d) => d.endpoint_id).sort(), ["1-customer", "acct:7", "customer"]);
    const toAcct = await api.call("ListDeliveries", { tenant_id: tenant, endpoint_id: "acct:7" });
    assert.deepEqual(toAcct.deliveries.map((d) => d.event_id).sort(), ["order", "order-1", "order:1001"]);
  });

  test("an empty event id is generated, differently on each emit", async () => {
    const tenant = uniqueTenant("gen");
    const a = await api.call("Emit", { tenant_id: tenant, event_type: "t", data_json: "1" });
    const b = await api.call("Emit", { tenant_id: tenant, event_type: "t", data_json: "2" });
    assert.match(a.event_id, /^evt_/);
    assert.match(b.event_id, /^evt_/);
    assert.notEqual(a.event_id, b.event_id);
    assert.equal(a.duplicate || b.duplicate, false);
    const got = await api.call("GetEvent", { tenant_id: tenant, event_id: b.event_id });
    assert.equal(got.event.data_json, "2");
  });

  test("GetEvent answers NOT_FOUND for an unknown event and for another tenant's event", async () => {
    const tenant = uniqueTenant("get");
    await api.call("Emit", { tenant_id: tenant, event_id: "mine", event_type: "t", data_json: "{}" });
    await expectStatus(
      api.call("GetEvent", { tenant_id: tenant, event_id: "nope" }),
      status.NOT_FOUND,
      "nope",
    );
    await expectStatus(
      api.call("GetEvent", { tenant_id: uniqueTenant("stranger"), event_id: "mine" }),
      status.NOT_FOUND,
      "mine",
    );
  });

  test("after DeleteEndpoint, new events skip it and its past deliveries stay readable", async () => {
    const tenant = uniqueTenant("del");
    await endpoint(tenant, "keep");
    await endpoint(tenant, "drop");
    const before = await api.call("Emit", {
      tenant_id: tenant,
      event_id: "e1",
      event_type: "t",
      data_json: "{}",
    });
    assert.equal(before.delivery_ids.length, 2);
    await api.call("DeleteEndpoint", { tenant_id: tenant, id: "drop" });
    const after = await api.call("Emit", {
      tenant_id: tenant,
      event_id: "e2",
      event_type: "t",
      data_json: "{}",
    });
    assert.equal(after.delivery_ids.length, 1);
    const old = await api.call("GetEvent", { tenant_id: tenant, event_id: "e1" });
    assert.deepEqual(old.deliveries.map((d) => d.endpoint_id).sort(), ["drop", "keep"]);
  });
});
