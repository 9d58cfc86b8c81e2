import assert from "node:assert/strict";
import { test } from "node:test";
import { readTestSettings } from "@hookline/testkit";
import { DeliveryProducer, QueueRouting, QueueUnavailableError } from "./index.js";
import { next, queuesBehindRelay } from "./test-helpers.js";

const settings = readTestSettings(process.env);

const job = (n: number) => ({
  tenantId: "t",
  endpointId: "ep",
  deliveryId: `dl_outage_${n}`,
  attemptNumber: 1,
});

test("an enqueue waits out a blip, fails at once once Redis has been away a while, and within its timeout while Redis is silent", {
  skip: settings.kind !== "servers" && "the embedded run has no Redis",
}, async () => {
  const { relay, queues, dispose } = await queuesBehindRelay(settings);
  const routing = new QueueRouting(0, { maxInFlight: 2 });
  const producer = new DeliveryProducer(queues, routing, { addTimeoutMs: 300, failFastAfterMs: 20 });
  const patient = new DeliveryProducer(queues, routing);
  try {
    await producer.enqueue([job(1)]);

    relay.goSilent();
    let started = performance.now();
    await assert.rejects(producer.enqueue([job(2)]), QueueUnavailableError);
    const silentFor = performance.now() - started;
    // Before, the add waited for Redis to answer again, however long that took.
    assert.ok(silentFor >= 290 && silentFor < 2000, `gave up after ${Math.round(silentFor)} ms`);

    // A blip: an add made while Redis is away for a moment lands once it is back.
    let reconnecting = next(queues, "reconnecting");
    await relay.goDown();
    await reconnecting;
    const duringBlip = patient.enqueue([job(5)]);
    let ready = next(queues, "ready");
    await relay.comeBack();
    await ready;
    await duringBlip;

    // Away for longer than failFastAfterMs (20 ms; ioredis's second try is 50 ms after its first).
    reconnecting = next(queues, "reconnecting");
    await relay.goDown();
    await reconnecting;
    await next(queues, "reconnecting");
    started = performance.now();
    await assert.rejects(producer.enqueue([job(3)]), /unreachable/);
    // What GetEndpoint reads from the queue: it answers without it rather than wait.
    await assert.rejects(producer.currentLimit({ tenantId: "t", endpointId: "ep" }), QueueUnavailableError);
    assert.ok(performance.now() - started < 100, "no wait for a connection that is not there");

    ready = next(queues, "ready");
    await relay.comeBack();
    await ready;
    await producer.enqueue([job(4)]);
  } finally {
    await producer.close();
    await patient.close();
    await dispose();
  }
});
