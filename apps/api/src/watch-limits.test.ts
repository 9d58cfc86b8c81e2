import assert from "node:assert/strict";
import http2 from "node:http2";
import { after, before, describe, test } from "node:test";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { AttemptLogService, Health, PortalService } from "@hookline/contracts";
import { createEndpoint, emitEvent, recordAttempts } from "@hookline/store";
import { eventually, readTestSettings } from "@hookline/testkit";
import { startTestApi, type TestApi } from "./test-helpers.js";

const settings = readTestSettings(process.env);
const TOKEN_A = "watch-limits-token-a-0123456789";
const TOKEN_B = "watch-limits-token-b-0123456789";

/**
 * Opens a stream: `ended` resolves once it is refused or closed, `answered` once its first message
 * arrives (Health.Watch sends the status at once; WatchAttempts only when attempts exist).
 */
function open(api: TestApi, token: string | undefined, kind: "attempts" | "health" = "attempts") {
  const transport = createGrpcTransport({ baseUrl: `http://${api.address}` });
  const controller = new AbortController();
  const options = {
    signal: controller.signal,
    ...(token && { headers: { authorization: `Bearer ${token}` } }),
  };
  const stream =
    kind === "attempts"
      ? createClient(AttemptLogService, transport).watchAttempts({}, options)
      : createClient(Health, transport).watch({ service: "" }, options);
  let answer = () => {};
  const answered = new Promise<void>((resolve) => {
    answer = resolve;
  });
  const ended = (async () => {
    try {
      for await (const _ of stream) {
        // What the messages say is not the point here.
        answer();
      }
      return "ended";
    } catch (error) {
      return controller.signal.aborted ? "closed" : ConnectError.from(error);
    }
  })();
  return { ended, answered, close: () => controller.abort() };
}

describe("WatchAttempts and Health.Watch streams are bounded per token and in total", () => {
  let api: TestApi;
  before(async () => {
    api = await startTestApi(settings, {
      HOOKLINE_API_TOKENS: `tenant:a:${TOKEN_A},tenant:b:${TOKEN_B}`,
      HOOKLINE_MAX_STREAMS_PER_TOKEN: "2",
      HOOKLINE_MAX_STREAMS: "3",
      HOOKLINE_MAX_HEALTH_WATCHES: "1",
    });
  });
  after(() => api?.close());

  const refused = async (stream: ReturnType<typeof open>, mentions: string) => {
    const result = await stream.ended;
    assert.ok(result instanceof ConnectError, `refused, not ${String(result)}`);
    assert.equal(result.code, Code.ResourceExhausted);
    assert.match(result.rawMessage, new RegExp(mentions));
  };

  test("beyond either limit a new stream is RESOURCE_EXHAUSTED; closing one frees its slot", async () => {
    const a1 = open(api, TOKEN_A);
    const a2 = open(api, TOKEN_A);
    await eventually(
      async () => api.server.openStreams,
      (n) => n === 2,
    );
    await refused(open(api, TOKEN_A), "HOOKLINE_MAX_STREAMS_PER_TOKEN");
    const b1 = open(api, TOKEN_B);
    await eventually(
      async () => api.server.openStreams,
      (n) => n === 3,
    );
    await refused(open(api, TOKEN_B), "HOOKLINE_MAX_STREAMS\\b");
    a1.close();
    assert.equal(await a1.ended, "closed");
    await eventually(
      async () => api.server.openStreams,
      (n) => n === 2,
    );
    const a3 = open(api, TOKEN_A);
    await eventually(
      async () => api.server.openStreams,
      (n) => n === 3,
    );
    for (const stream of [a2, b1, a3]) stream.close();
    await Promise.all([a2.ended, b1.ended, a3.ended]);
  });

  /** Waits for a stream's first message, failing at once if it ends first. */
  const answers = async (stream: ReturnType<typeof open>) => {
    const first = await Promise.race([stream.answered.then(() => "answered"), stream.ended]);
    assert.equal(first, "answered", `answered, not ${String(first)}`);
  };

  test("Health.Watch, which needs no token, has a pool of its own: it takes no tenant's slot", async () => {
    const health = open(api, undefined, "health");
    await answers(health);
    // Counted in the total, the unauthenticated watch would leave tenants two slots, not three.
    const held = [open(api, TOKEN_A), open(api, TOKEN_A), open(api, TOKEN_B)];
    await eventually(
      async () => api.server.openStreams,
      (n) => n === 3,
    );
    await refused(open(api, undefined, "health"), "HOOKLINE_MAX_HEALTH_WATCHES");
    health.close();
    assert.equal(await health.ended, "closed");
    const again = open(api, undefined, "health");
    await answers(again);
    for (const stream of [...held, again]) stream.close();
    await Promise.all([...held, again].map((stream) => stream.ended));
  });
});

describe("a tenant's tokens and portal links share its stream cap", () => {
  let api: TestApi;
  before(async () => {
    api = await startTestApi(settings, {
      HOOKLINE_API_TOKENS: `tenant:a:${TOKEN_A},tenant:b:${TOKEN_B}`,
      HOOKLINE_MAX_STREAMS_PER_TOKEN: "2",
      HOOKLINE_MAX_STREAMS_PER_TENANT: "3",
      HOOKLINE_MAX_STREAMS: "10",
    });
  });
  after(() => api?.close());

  test("links a tenant issues itself hold no more streams than the tenant may", async () => {
    const portal = createClient(PortalService, createGrpcTransport({ baseUrl: `http://${api.address}` }));
    const asA = { headers: { authorization: `Bearer ${TOKEN_A}` } };
    // Each link is a token of its own: two links and the tenant's token would hold six streams.
    const links = await Promise.all(
      [3600n, 3601n].map(async (seconds) => (await portal.createPortalLink({ ttl: { seconds } }, asA)).token),
    );
    const held = [open(api, TOKEN_A), open(api, TOKEN_A), open(api, links[0])];
    await eventually(
      async () => api.server.openStreams,
      (n) => n === 3,
    );
    const over = open(api, links[1]);
    // Refused, or (the cap not held) open: a fourth stream counted.
    const overTenant = await Promise.race([
      over.ended,
      eventually(
        async () => api.server.openStreams,
        (n) => n === 4,
      ).then(
        () => "open",
        () => "neither refused nor open",
      ),
    ]);
    if (!(overTenant instanceof ConnectError)) over.close();
    assert.ok(overTenant instanceof ConnectError, `refused, not ${String(overTenant)}`);
    assert.equal(overTenant.code, Code.ResourceExhausted);
    assert.match(overTenant.rawMessage, /HOOKLINE_MAX_STREAMS_PER_TENANT/);
    // Another tenant is not held back by it.
    const b = open(api, TOKEN_B);
    await eventually(
      async () => api.server.openStreams,
      (n) => n === 4,
    );
    for (const stream of [...held, b]) stream.close();
    await Promise.all([...held, b].map((stream) => stream.ended));
  });
});

describe("streams that never read hold a bounded backfill, released when they close", () => {
  let api: TestApi;
  before(async () => {
    api = await startTestApi(settings, { HOOKLINE_MAX_STREAMS: "50" });
  });
  after(() => api?.close());

  // The test process is the api: measure its heap after forced collections.
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc") as () => void;
  const heap = () => {
    gc();
    gc();
    return process.memoryUsage().heapUsed;
  };

  test("ten stalled WatchAttempts streams over 1,500 attempts of 4 KiB each", async () => {
    const db = api.infra.store.db;
    await createEndpoint(
      db,
      { tenantId: "mem", id: "ep", url: "https://mem.test/", description: "", eventTypes: [], secret: "s" },
      new Date(),
    );
    const body = "b".repeat(4096);
    for (let batch = 0; batch < 15; batch++) {
      const deliveries = [];
      for (let n = 0; n < 100; n++) {
        const { deliveries: made } = await emitEvent(
          db,
          { tenantId: "mem", id: `m${batch}-${n}`, eventType: "x", dataJson: "{}" },
          new Date(),
        );
        deliveries.push(...made);
      }
      await recordAttempts(
        db,
        deliveries.map((d) => ({
          deliveryId: d.id,
          attemptNumber: 1,
          url: "https://x.test/hook",
          startedAt: new Date(),
          durationMs: 1,
          responseStatus: 500,
          responseBody: body,
          error: "",
          deliveryStatus: "pending" as const,
          nextAttemptAt: null,
        })),
        new Date(),
      );
    }
    const baseline = heap();
    // Each on its own HTTP/2 session, never reading: flow control stops the server's writes.
    const sessions = Array.from({ length: 10 }, () => http2.connect(`http://${api.address}`));
    for (const session of sessions) {
      session.on("error", () => {});
      const stream = session.request({
        ":method": "POST",
        ":path": "/hookline.v1.AttemptLogService/WatchAttempts",
        "content-type": "application/grpc",
      });
      stream.on("error", () => {});
      stream.pause();
      // after_attempt_id = 1 (field 4): backfill from the start.
      stream.end(Buffer.from([0, 0, 0, 0, 2, 0x20, 0x01]));
    }
    await eventually(
      async () => api.server.openStreams,
      (n) => n === 10,
    );
    // Let the server fill what flow control allows.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const stalled = heap() - baseline;
    // 500-row pages of 4 KiB bodies held over 2 MiB per stream before (22 MiB for ten).
    assert.ok(stalled < 5 * 1024 * 1024, `ten stalled streams hold ${(stalled / 1048576).toFixed(1)} MiB`);
    for (const session of sessions) session.destroy();
    await eventually(
      async () => api.server.openStreams,
      (n) => n === 0,
    );
    const released = heap() - baseline;
    assert.ok(released < 2 * 1024 * 1024, `${(released / 1048576).toFixed(1)} MiB still held after close`);
  });
});
