import assert from "node:assert/strict";
import { test } from "node:test";
import { DeliveryStatus } from "@hookline/contracts";
import { emitEvent } from "@hookline/store";
import { eventually, readTestSettings, startReceiver } from "@hookline/testkit";
import { finalDeliveries, sharedTestService, startTestService } from "./test-helpers.js";

const settings = readTestSettings(process.env);

const shared = sharedTestService(settings, {
  HOOKLINE_METRICS_ADDR: "127.0.0.1:0",
  // Every scrape reads the backlog afresh: the test changes it between scrapes.
  HOOKLINE_METRICS_BACKLOG_EVERY: "0s",
  HOOKLINE_RETRY_SCHEDULE: "20ms",
  HOOKLINE_SWEEP_INTERVAL: "1h",
  HOOKLINE_SWEEP_GRACE: "0ms",
});

const scrape = async () => (await fetch(`http://127.0.0.1:${shared.svc.service.metricsPort}/metrics`)).text();
const value = (text: string, series: string) => {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
};
/** Opens a WatchAttempts stream, waits until the api holds it open, then leaves it. */
const watchThenLeave = async (tenantId: string) => {
  const controller = new AbortController();
  const stream = shared.svc.log
    .watchAttempts({ tenantId }, { signal: controller.signal })
    [Symbol.asyncIterator]();
  void stream.next().catch(() => undefined);
  await eventually(scrape, (t) => value(t, "hookline_watch_streams_open") === 1);
  controller.abort();
};

test("/metrics counts deliveries by outcome, attempts by status class, durations, backlog and streams", async () => {
  const ok = await shared.receiver();
  const bad = await shared.receiver(() => ({ status: 503 }));
  const stuck = await shared.receiver(() => "hang");
  await shared.svc.endpoints.createEndpoint({ tenantId: "m", id: "ok", url: ok.url, eventTypes: ["a"] });
  await shared.svc.endpoints.createEndpoint({ tenantId: "m", id: "bad", url: bad.url, eventTypes: ["a"] });
  await shared.svc.emit.emit({ tenantId: "m", eventId: "e1", eventType: "a", dataJson: "{}" });
  await finalDeliveries(shared.svc, "m", "e1");
  const text = await scrape();
  assert.equal(value(text, 'hookline_deliveries_total{outcome="delivered"}'), 1);
  assert.equal(value(text, 'hookline_deliveries_total{outcome="failed"}'), 1);
  assert.equal(value(text, 'hookline_attempts_total{status_class="2xx"}'), 1);
  assert.equal(value(text, 'hookline_attempts_total{status_class="5xx"}'), 2);
  assert.equal(value(text, "hookline_attempt_duration_seconds_count"), 3);

  // A backlog: the hanging endpoint holds its two slots, three more deliveries wait.
  await shared.svc.endpoints.createEndpoint({
    tenantId: "m",
    id: "stuck",
    url: stuck.url,
    eventTypes: ["b"],
  });
  for (const n of [1, 2, 3, 4, 5])
    await shared.svc.emit.emit({ tenantId: "m", eventId: `b${n}`, eventType: "b", dataJson: "{}" });
  await stuck.waitForRequests(2);
  const backlog = await scrape();
  const depth = backlog.split("\n").find((l) => l.startsWith("hookline_queue_depth{"));
  assert.match(depth ?? "", / 5$/);
  assert.match(backlog, /hookline_oldest_pending_age_seconds\{queue="hookline-ep-[^"]+"\} \d/);

  // The sweeper finds nothing stranded here (every pending delivery has its job)...
  await shared.svc.service.worker.sweep();
  assert.equal(value(await scrape(), "hookline_sweeper_reenqueued_total"), 0);
  // ...until a commit without its queue add (what a crash in between leaves) strands one.
  await emitEvent(
    shared.svc.service.infra.store.db,
    { tenantId: "m", id: "stranded", eventType: "a", dataJson: "{}" },
    new Date(Date.now() - 1000),
  );
  assert.equal(await shared.svc.service.worker.sweep(), 2, "one delivery per subscribed endpoint");
  assert.equal(value(await scrape(), "hookline_sweeper_reenqueued_total"), 2);

  await watchThenLeave("m");
  await eventually(scrape, (t) => value(t, "hookline_watch_streams_open") === 0);
});

test("/metrics shows how long the embedded database's thread has been busy, and only when it runs one", async () => {
  const series = "hookline_embedded_engine_busy_seconds_total";
  const startedAt = performance.now();
  const before = value(await scrape(), series);
  if (settings.kind !== "embedded") {
    assert.equal(before, undefined, "no embedded database on servers");
    return;
  }
  assert.ok(before !== undefined && before > 0, "migrating the store kept it busy");
  const ok = await shared.receiver();
  await shared.svc.endpoints.createEndpoint({ tenantId: "busy", id: "ok", url: ok.url, eventTypes: ["a"] });
  for (const n of [1, 2, 3]) {
    await shared.svc.emit.emit({ tenantId: "busy", eventId: `e${n}`, eventType: "a", dataJson: "{}" });
    await finalDeliveries(shared.svc, "busy", `e${n}`);
  }
  const after = value(await scrape(), series);
  assert.ok(after !== undefined && after > before, "the deliveries' statements add to it");
  // One thread: never busier than the time that passed.
  assert.ok(after - before <= (performance.now() - startedAt) / 1000);
});

test("/metrics counts deliveries cancelled with their endpoint as cancelled", async () => {
  const receiver = await shared.receiver();
  // One start a day: the first delivery goes out, the other three wait in the queue.
  await shared.svc.endpoints.createEndpoint({
    tenantId: "c",
    id: "slow",
    url: receiver.url,
    eventTypes: ["a"],
    rateLimitPerSecond: 1 / 86_400,
  });
  for (const n of [1, 2, 3, 4])
    await shared.svc.emit.emit({ tenantId: "c", eventId: `c${n}`, eventType: "a", dataJson: "{}" });
  // The first is delivered, not only requested: its attempt is recorded after its job ends.
  await finalDeliveries(shared.svc, "c", "c1");
  const cancelled = 'hookline_deliveries_total{outcome="cancelled"}';
  const before = value(await scrape(), cancelled) ?? 0;
  await shared.svc.endpoints.deleteEndpoint({ tenantId: "c", id: "slow" });
  assert.equal((value(await scrape(), cancelled) ?? 0) - before, 3);
});

test("/metrics counts RPCs by method and code over gRPC and Connect, and times the unary ones", async () => {
  const handled = (method: string, code: string) =>
    `hookline_rpc_handled_total{method="hookline.v1.${method}",code="${code}"}`;
  const timed = (method: string) => `hookline_rpc_handling_seconds_count{method="hookline.v1.${method}"}`;
  const watchCanceled = handled("AttemptLogService/WatchAttempts", "canceled");
  const watchTimedOut = handled("AttemptLogService/WatchAttempts", "deadline_exceeded");
  const series = [
    handled("EmitService/Emit", "ok"),
    handled("EmitService/Emit", "invalid_argument"),
    handled("EmitService/GetEvent", "ok"),
    handled("EmitService/GetEvent", "not_found"),
    watchCanceled,
    watchTimedOut,
    timed("EmitService/Emit"),
    timed("EmitService/GetEvent"),
    timed("AttemptLogService/WatchAttempts"),
  ];
  const read = async () => {
    const text = await scrape();
    return new Map(series.map((s) => [s, value(text, s) ?? 0]));
  };
  const before = await read();

  // gRPC (the api's plain unary path): two good Emits and a refused one.
  await shared.svc.emit.emit({ tenantId: "r", eventId: "r1", eventType: "a", dataJson: "{}" });
  await shared.svc.emit.emit({ tenantId: "r", eventId: "r2", eventType: "a", dataJson: "{}" });
  await assert.rejects(shared.svc.emit.emit({ tenantId: "r", eventType: "a", dataJson: "{nope" }));
  // Connect JSON (Connect's own path): a found event and a missing one.
  const getEvent = (eventId: string) =>
    fetch(`http://${shared.svc.service.address}/hookline.v1.EmitService/GetEvent`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ tenantId: "r", eventId }),
    });
  assert.equal((await getEvent("r1")).status, 200);
  assert.equal((await getEvent("missing")).status, 404);
  // A stream is counted once it ends: here its caller goes away.
  await watchThenLeave("r");
  // ...and one whose deadline passed is not counted as its caller leaving. The deadline is sent
  // without a timer of the client's own, which would race the api's and reset the stream first;
  // the stream then ends when the api's deadline passes.
  const expiring = shared.svc.log
    .watchAttempts({ tenantId: "r" }, { headers: { "grpc-timeout": "200m" } })
    [Symbol.asyncIterator]();
  assert.equal((await expiring.next()).done, true);

  const text = await eventually(scrape, (t) =>
    [watchCanceled, watchTimedOut].every((s) => value(t, s) === (before.get(s) ?? 0) + 1),
  );
  const after = new Map(series.map((s) => [s, (value(text, s) ?? 0) - (before.get(s) ?? 0)]));
  assert.deepEqual(Object.fromEntries(after), {
    [handled("EmitService/Emit", "ok")]: 2,
    [handled("EmitService/Emit", "invalid_argument")]: 1,
    [handled("EmitService/GetEvent", "ok")]: 1,
    [handled("EmitService/GetEvent", "not_found")]: 1,
    [watchCanceled]: 1,
    [watchTimedOut]: 1,
    // Every unary call is timed, whichever path served it; a stream is not.
    [timed("EmitService/Emit")]: 3,
    [timed("EmitService/GetEvent")]: 2,
    [timed("AttemptLogService/WatchAttempts")]: 0,
  });
  assert.ok(
    (value(text, 'hookline_rpc_handling_seconds_sum{method="hookline.v1.EmitService/Emit"}') ?? 0) > 0,
  );
});

test("/metrics shows how long after they were due attempts started: first attempts, retries and manual ones", async () => {
  // A service of its own: the shared one's hanging and failing endpoints start attempts of their
  // own for seconds after their test, and the histogram has no tenant to tell them apart.
  const svc = await startTestService(settings, {
    HOOKLINE_METRICS_ADDR: "127.0.0.1:0",
    // Every scrape reads the backlog afresh: the test changes it between scrapes.
    HOOKLINE_METRICS_BACKLOG_EVERY: "0s",
    HOOKLINE_RETRY_SCHEDULE: "20ms",
  });
  // Fails once, then answers 200: a first attempt and a retry, then a resend asked for by hand.
  const flaky = await startReceiver((_request, n) => (n === 1 ? { status: 503 } : { status: 200 }));
  try {
    const counts = async () => {
      const text = await (await fetch(`http://127.0.0.1:${svc.service.metricsPort}/metrics`)).text();
      return Object.fromEntries(
        ["first", "retry", "manual"].map((kind) => [
          kind,
          value(text, `hookline_attempt_start_delay_seconds_count{kind="${kind}"}`) ?? 0,
        ]),
      );
    };
    await svc.endpoints.createEndpoint({ tenantId: "late", id: "flaky", url: flaky.url });
    await svc.emit.emit({ tenantId: "late", eventId: "l1", eventType: "a", dataJson: "{}" });
    const [delivery] = await finalDeliveries(svc, "late", "l1");
    assert.equal(delivery?.status, DeliveryStatus.DELIVERED);
    await svc.log.retryDelivery({ tenantId: "late", deliveryId: delivery?.id ?? "" });
    await flaky.waitForRequests(3);
    assert.deepEqual(await eventually(counts, (c) => c.manual === 1), { first: 1, retry: 1, manual: 1 });
  } finally {
    await flaky.close();
    await svc.close();
  }
});

test("/metrics counts calls refused before their service, such as one without a token, over gRPC and Connect", async () => {
  const svc = await startTestService(settings, {
    HOOKLINE_METRICS_ADDR: "127.0.0.1:0",
    HOOKLINE_API_TOKENS: "metrics-token-0123456789",
  });
  try {
    // Neither call carries a token: the api answers from the headers, before any service runs.
    await assert.rejects(
      svc.emit.emit({ tenantId: "x", eventType: "a", dataJson: "{}" }),
      /unauthenticated/i,
    );
    const connect = await fetch(`http://${svc.service.address}/hookline.v1.EmitService/Emit`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ tenantId: "x", eventType: "a", dataJson: "{}" }),
    });
    assert.equal(connect.status, 401);
    const text = await (await fetch(`http://127.0.0.1:${svc.service.metricsPort}/metrics`)).text();
    assert.equal(
      value(text, 'hookline_rpc_handled_total{method="hookline.v1.EmitService/Emit",code="unauthenticated"}'),
      2,
    );
    // Refused calls are not timed: the histogram is of calls a service answered.
    assert.equal(
      value(text, 'hookline_rpc_handling_seconds_count{method="hookline.v1.EmitService/Emit"}'),
      undefined,
    );
  } finally {
    await svc.close();
  }
});
