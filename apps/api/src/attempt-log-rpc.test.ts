import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type AttemptResult, recordAttempts } from "@hookline/store";
import { readTestSettings } from "@hookline/testkit";
import { type Rpc, startTestApi, type TestApi, uniqueTenant } from "./test-helpers.js";

const settings = readTestSettings(process.env);

type Listed = { id: string }[];

describe("AttemptLogService over gRPC", () => {
  let api: TestApi;
  const tenant = uniqueTenant("log");
  const deliveryOf: Record<string, string> = {};

  // Two endpoints, three events: six deliveries. Attempts are written by the worker; without one
  // running, they are recorded through the store function the worker uses.
  before(async () => {
    api = await startTestApi(settings);
    for (const id of ["ep-a", "ep-b"]) {
      await api.call("CreateEndpoint", { tenant_id: tenant, id, url: `https://${id}.test/` });
    }
    for (const eventId of ["e1", "e2", "e3"]) {
      const { delivery_ids } = await api.call("Emit", {
        tenant_id: tenant,
        event_id: eventId,
        event_type: "t",
        data_json: "{}",
      });
      assert.equal(delivery_ids.length, 2);
      deliveryOf[`${eventId}/ep-a`] = delivery_ids[0] ?? "";
      deliveryOf[`${eventId}/ep-b`] = delivery_ids[1] ?? "";
    }
    await api.call("Emit", { tenant_id: uniqueTenant("noise"), event_type: "t", data_json: "{}" });

    const start = new Date();
    const attempt = (key: string, n: number, outcome: Partial<AttemptResult>): AttemptResult => ({
      deliveryId: deliveryOf[key] ?? assert.fail(key),
      attemptNumber: n,
      url: "https://receiver.test/hook",
      startedAt: start,
      durationMs: 12,
      responseStatus: 500,
      responseBody: "oops",
      error: "",
      deliveryStatus: "pending",
      nextAttemptAt: new Date(start.getTime() + 60_000),
      ...outcome,
    });
    await recordAttempts(api.infra.store.db, [attempt("e1/ep-a", 1, {})], start);
    await recordAttempts(
      api.infra.store.db,
      [
        attempt("e1/ep-a", 2, {
          responseStatus: 200,
          responseBody: "ok",
          deliveryStatus: "delivered",
          nextAttemptAt: null,
        }),
        attempt("e1/ep-b", 1, { responseStatus: 0, responseBody: "", error: "no response within 300 ms" }),
        attempt("e2/ep-b", 1, { responseStatus: 400, deliveryStatus: "failed", nextAttemptAt: null }),
      ],
      start,
    );
  });
  after(() => api?.close());

  /** Follows next_page_token to the end; returns every page's ids. */
  async function allPages(rpc: Extract<Rpc, "ListDeliveries" | "ListAttempts">, request: object) {
    const pages: string[][] = [];
    let page_token = "";
    do {
      const response = await api.call(rpc, { ...request, page_token });
      const items: Listed = "deliveries" in response ? response.deliveries : response.attempts;
      pages.push(items.map((item) => item.id));
      page_token = response.next_page_token;
    } while (page_token !== "" && pages.length < 20);
    return pages;
  }

  test("ListDeliveries filters by event, endpoint and status, alone or together", async () => {
    const ids = async (filter: object) =>
      (await api.call("ListDeliveries", { tenant_id: tenant, ...filter })).deliveries.map((d) => d.id);
    assert.equal((await ids({})).length, 6);
    assert.deepEqual(await ids({ event_id: "e1" }), [deliveryOf["e1/ep-a"], deliveryOf["e1/ep-b"]]);
    assert.deepEqual(
      await ids({ endpoint_id: "ep-b" }),
      ["e1", "e2", "e3"].map((e) => deliveryOf[`${e}/ep-b`]),
    );
    assert.deepEqual(await ids({ event_id: "e2", endpoint_id: "ep-b" }), [deliveryOf["e2/ep-b"]]);
    assert.deepEqual(await ids({ status: "DELIVERY_STATUS_DELIVERED" }), [deliveryOf["e1/ep-a"]]);
    assert.deepEqual(await ids({ status: "DELIVERY_STATUS_FAILED" }), [deliveryOf["e2/ep-b"]]);
    assert.equal((await ids({ status: "DELIVERY_STATUS_PENDING" })).length, 4);
    assert.deepEqual(await ids({ status: "DELIVERY_STATUS_CANCELLED" }), []);
    assert.deepEqual(await ids({ event_id: "no-such-event" }), []);

    const [delivered] = (
      await api.call("ListDeliveries", { tenant_id: tenant, event_id: "e1", endpoint_id: "ep-a" })
    ).deliveries;
    assert.equal(delivered?.status, "DELIVERY_STATUS_DELIVERED");
    assert.equal(delivered?.attempt_count, 2);
    assert.equal(delivered?.next_attempt_at, null, "a final delivery has no next attempt");
  });

  test("ListDeliveries pages in creation order", async () => {
    const pages = await allPages("ListDeliveries", { tenant_id: tenant, page_size: 4 });
    assert.deepEqual(
      pages.map((p) => p.length),
      [4, 2],
    );
    const expected = ["e1", "e2", "e3"].flatMap((e) => [deliveryOf[`${e}/ep-a`], deliveryOf[`${e}/ep-b`]]);
    assert.deepEqual(pages.flat(), expected);
    const exact = await allPages("ListDeliveries", { tenant_id: tenant, page_size: 3 });
    assert.deepEqual(exact.flat(), expected);
  });

  test("ListAttempts filters by delivery, event and endpoint, with results in the attempt's shape", async () => {
    const list = async (filter: object) =>
      (await api.call("ListAttempts", { tenant_id: tenant, ...filter })).attempts;
    const all = await list({});
    assert.equal(all.length, 4);
    const byDelivery = await list({ delivery_id: deliveryOf["e1/ep-a"] });
    assert.deepEqual(
      byDelivery.map((a) => [a.attempt_number, a.response_status, a.delivery_status]),
      [
        [1, 500, "DELIVERY_STATUS_PENDING"],
        [2, 200, "DELIVERY_STATUS_DELIVERED"],
      ],
    );
    assert.deepEqual(
      (await list({ event_id: "e1" })).map((a) => a.delivery_id),
      [deliveryOf["e1/ep-a"], deliveryOf["e1/ep-a"], deliveryOf["e1/ep-b"]],
    );
    const toB = await list({ endpoint_id: "ep-b" });
    assert.deepEqual(toB.map((a) => a.event_id).sort(), ["e1", "e2"]);
    const timeout = toB.find((a) => a.event_id === "e1");
    assert.equal(timeout?.response_status, 0);
    assert.equal(timeout?.error, "no response within 300 ms");
    assert.equal(timeout?.tenant_id, tenant);
    assert.deepEqual(await list({ event_id: "e3" }), []);
  });

  test("ListAttempts ids increase strictly and page across the whole log", async () => {
    const pages = await allPages("ListAttempts", { tenant_id: tenant, page_size: 3 });
    assert.deepEqual(
      pages.map((p) => p.length),
      [3, 1],
    );
    const ids = pages.flat().map(BigInt);
    for (let i = 1; i < ids.length; i++) assert.ok((ids[i] ?? 0n) > (ids[i - 1] ?? 0n), "ids increase");
  });
});
