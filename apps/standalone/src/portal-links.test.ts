import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { durationFromMs, timestampDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient, type Interceptor } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import {
  AttemptLogService,
  EmitService,
  EndpointService,
  PortalService,
  SessionKind,
} from "@hookline/contracts";
import { eventually, type Receiver, readTestSettings, startReceiver } from "@hookline/testkit";
import { startTestService, type TestService } from "./test-helpers.js";

const settings = readTestSettings(process.env);
const ADMIN = "admin-token-0123456789";
const ACME = "acme-token-0123456789ab";
let svc: TestService;
let receiver: Receiver;

before(async () => {
  svc = await startTestService(settings, {
    HOOKLINE_API_TOKENS: `${ADMIN}, tenant:acme:${ACME}`,
    HOOKLINE_ALLOWED_CIDRS: "127.0.0.0/8",
    HOOKLINE_MAX_STREAMS_PER_TOKEN: "2",
  });
  receiver = await startReceiver();
  const admin = clientsWith(ADMIN);
  for (const tenantId of ["acme", "globex"]) {
    for (const id of ["ep1", "ep2"])
      await admin.endpoints.createEndpoint({ tenantId, id, url: receiver.url });
    await admin.emit.emit({ tenantId, eventId: `${tenantId}-1`, eventType: "x", dataJson: "{}" });
  }
  await receiver.waitForRequests(4);
});
after(async () => {
  await receiver.close();
  await svc.close();
});

function clientsWith(token: string) {
  const bearer: Interceptor = (next) => (req) => {
    req.header.set("authorization", `Bearer ${token}`);
    return next(req);
  };
  const transport = createGrpcTransport({ baseUrl: `http://${svc.service.address}`, interceptors: [bearer] });
  return {
    endpoints: createClient(EndpointService, transport),
    emit: createClient(EmitService, transport),
    log: createClient(AttemptLogService, transport),
    portal: createClient(PortalService, transport),
  };
}

async function failure(call: Promise<unknown>): Promise<ConnectError | "ok"> {
  try {
    await call;
    return "ok";
  } catch (error) {
    return ConnectError.from(error);
  }
}

async function codeOf(call: Promise<unknown>): Promise<Code | "ok"> {
  const result = await failure(call);
  return result === "ok" ? "ok" : result.code;
}

async function firstOfStream(stream: AsyncIterable<unknown>): Promise<unknown> {
  for await (const message of stream) return message;
}

test("a tenant's portal link acts on that tenant only, and cannot mint links", async () => {
  const link = await clientsWith(ADMIN).portal.createPortalLink({ tenantId: "acme" });
  assert.equal(link.path, `/ui/#portal=${link.token}`);
  assert.ok(!link.token.includes(ADMIN) && !link.token.includes(ACME));
  const customer = clientsWith(link.token);

  const session = await customer.portal.getSession({});
  assert.equal(session.kind, SessionKind.PORTAL);
  assert.equal(session.tenantId, "acme");
  assert.ok(session.expiresAt && timestampDate(session.expiresAt) > new Date());

  const mine = await customer.endpoints.listEndpoints({ tenantId: "" });
  assert.deepEqual(
    mine.endpoints.map((e) => `${e.tenantId}/${e.id}`),
    ["acme/ep1", "acme/ep2"],
  );
  const deliveries = await customer.log.listDeliveries({});
  assert.ok(deliveries.deliveries.length > 0 && deliveries.deliveries.every((d) => d.tenantId === "acme"));

  for (const call of [
    () => customer.endpoints.listEndpoints({ tenantId: "globex" }),
    () => customer.endpoints.getEndpoint({ tenantId: "globex", id: "ep1" }),
    () => customer.log.listAttempts({ tenantId: "globex" }),
    () => customer.emit.getEvent({ tenantId: "globex", eventId: "globex-1" }),
    () => firstOfStream(customer.log.watchAttempts({ tenantId: "globex" })),
    () => customer.portal.createPortalLink({ tenantId: "acme" }),
  ]) {
    assert.equal(await codeOf(call()), Code.PermissionDenied);
  }
});

test("a tenant's API token mints links for its tenant only", async () => {
  const acme = clientsWith(ACME);
  assert.equal(await codeOf(acme.portal.createPortalLink({ tenantId: "globex" })), Code.PermissionDenied);
  const link = await acme.portal.createPortalLink({ tenantId: "" });
  assert.equal((await clientsWith(link.token).portal.getSession({})).tenantId, "acme");
});

test("an endpoint-scoped link sees and changes that endpoint only", async () => {
  const link = await clientsWith(ADMIN).portal.createPortalLink({ tenantId: "acme", endpointId: "ep2" });
  const customer = clientsWith(link.token);
  assert.equal((await customer.portal.getSession({})).endpointId, "ep2");
  const listed = await customer.endpoints.listEndpoints({});
  assert.deepEqual(
    listed.endpoints.map((e) => e.id),
    ["ep2"],
  );
  // On the first page, however small the pages: the tenant's ep1 comes before it.
  const small = await customer.endpoints.listEndpoints({ pageSize: 1 });
  assert.deepEqual([small.endpoints.map((e) => e.id), small.nextPageToken], [["ep2"], ""]);
  assert.equal(await codeOf(customer.endpoints.listEndpoints({ pageToken: "bm9wZQ" })), Code.InvalidArgument);
  const deliveries = await customer.log.listDeliveries({});
  assert.ok(deliveries.deliveries.length > 0 && deliveries.deliveries.every((d) => d.endpointId === "ep2"));
  const event = await customer.emit.getEvent({ eventId: "acme-1" });
  assert.deepEqual(
    event.deliveries.map((d) => d.endpointId),
    ["ep2"],
  );
  assert.ok((await customer.endpoints.getEndpoint({ id: "ep2" })).endpoint?.secret);

  const admin = clientsWith(ADMIN);
  const [other] = (await admin.log.listDeliveries({ tenantId: "acme", endpointId: "ep1" })).deliveries;
  assert.ok(other);
  for (const call of [
    () => customer.endpoints.getEndpoint({ id: "ep1" }),
    () => customer.endpoints.updateEndpoint({ id: "ep1", description: "mine now" }),
    () => customer.endpoints.deleteEndpoint({ id: "ep1" }),
    () => customer.endpoints.rotateEndpointSecret({ id: "ep1" }),
    () => customer.endpoints.createEndpoint({ url: receiver.url }),
    () => customer.emit.emit({ eventType: "x", dataJson: "{}" }),
    () => customer.log.listAttempts({ endpointId: "ep1" }),
    () => firstOfStream(customer.log.watchAttempts({ endpointId: "ep1" })),
  ]) {
    assert.equal(await codeOf(call()), Code.PermissionDenied);
  }
});

test("an endpoint-scoped link finds no event or delivery of another endpoint, as if it did not exist", async () => {
  const admin = clientsWith(ADMIN);
  // ep3 takes only its own type: acme-1 (type x) went to ep1 and ep2, not to it.
  await admin.endpoints.createEndpoint({
    tenantId: "acme",
    id: "ep3",
    url: receiver.url,
    eventTypes: ["only.ep3"],
  });
  await admin.emit.emit({ tenantId: "acme", eventId: "acme-ep3", eventType: "only.ep3", dataJson: "{}" });
  const [other] = (await admin.log.listDeliveries({ tenantId: "acme", endpointId: "ep1" })).deliveries;
  assert.ok(other);
  const link = await admin.portal.createPortalLink({ tenantId: "acme", endpointId: "ep3" });
  const customer = clientsWith(link.token);
  const missing = async (call: Promise<unknown>, id: string) => {
    const refused = await failure(call);
    assert.ok(refused !== "ok" && refused.code === Code.NotFound, `NOT_FOUND for ${id}, not ${refused}`);
    return refused.rawMessage.replace(id, "<id>");
  };
  // Told exactly what an id that exists nowhere is told.
  assert.equal(
    await missing(customer.emit.getEvent({ eventId: "acme-1" }), "acme-1"),
    await missing(customer.emit.getEvent({ eventId: "acme-none" }), "acme-none"),
  );
  for (const call of [
    (deliveryId: string) => customer.log.retryDelivery({ deliveryId }),
    (deliveryId: string) => customer.log.describeDelivery({ deliveryId }),
  ]) {
    assert.equal(await missing(call(other.id), other.id), await missing(call("dlv_none"), "dlv_none"));
  }
  // Its own event is there.
  assert.equal((await customer.emit.getEvent({ eventId: "acme-ep3" })).event?.id, "acme-ep3");
  await admin.endpoints.deleteEndpoint({ tenantId: "acme", id: "ep3" });
  const gone = await failure(customer.endpoints.listEndpoints({}));
  assert.ok(gone !== "ok" && gone.code === Code.Unauthenticated, "its endpoint is gone");
  assert.match(gone.rawMessage, /endpoint "ep3" was deleted; ask for a new link/);
});

test("a link to an endpoint that was deleted reaches nothing, not even a new endpoint given its id", async () => {
  const admin = clientsWith(ADMIN);
  await admin.endpoints.createEndpoint({ tenantId: "acme", id: "ep4", url: receiver.url });
  const oldLink = (await admin.portal.createPortalLink({ tenantId: "acme", endpointId: "ep4" })).token;
  const old = clientsWith(oldLink);
  assert.ok((await old.endpoints.getEndpoint({ id: "ep4" })).endpoint?.secret);
  const watching = await openWatch(oldLink);
  await admin.endpoints.deleteEndpoint({ tenantId: "acme", id: "ep4" });
  const { endpoint: reused } = await admin.endpoints.createEndpoint({
    tenantId: "acme",
    id: "ep4",
    url: `${receiver.url}/someone-else`,
  });
  // A stream the old link opened before: it ends when the new endpoint's first attempt would
  // reach it (bounded, so that a stream left open fails the test rather than hangs it).
  await admin.emit.emit({ tenantId: "acme", eventId: "for-the-new-ep4", eventType: "x", dataJson: "{}" });
  const bound = setTimeout(watching.close, 10_000);
  const ended = await watching.ended;
  clearTimeout(bound);
  assert.ok(ended instanceof ConnectError && ended.code === Code.Unauthenticated, `ended ${String(ended)}`);
  assert.match(ended.rawMessage, /endpoint "ep4" was deleted/);
  for (const call of [
    () => old.endpoints.getEndpoint({ id: "ep4" }),
    () => old.endpoints.rotateEndpointSecret({ id: "ep4" }),
    () => old.log.listDeliveries({}),
    () => firstOfStream(old.log.watchAttempts({})),
  ]) {
    const refused = await failure(call());
    assert.ok(refused !== "ok" && refused.code === Code.Unauthenticated, `refused, not ${refused}`);
  }
  // A link made for the new endpoint reaches it.
  const fresh = clientsWith(
    (await admin.portal.createPortalLink({ tenantId: "acme", endpointId: "ep4" })).token,
  );
  assert.equal((await fresh.endpoints.getEndpoint({ id: "ep4" })).endpoint?.secret, reused?.secret);
  await admin.endpoints.deleteEndpoint({ tenantId: "acme", id: "ep4" });
});

test("an endpoint-scoped link may delete its own endpoint, and then reaches nothing", async () => {
  const admin = clientsWith(ADMIN);
  await admin.endpoints.createEndpoint({ tenantId: "acme", id: "ep5", url: receiver.url });
  const own = clientsWith(
    (await admin.portal.createPortalLink({ tenantId: "acme", endpointId: "ep5" })).token,
  );
  await own.endpoints.deleteEndpoint({ id: "ep5" });
  assert.equal(await codeOf(admin.endpoints.getEndpoint({ tenantId: "acme", id: "ep5" })), Code.NotFound);
  assert.equal(await codeOf(own.endpoints.getEndpoint({ id: "ep5" })), Code.Unauthenticated);
});

test("a link made for a new endpoint that took a deleted one's id sees none of the deleted one's history", async () => {
  const admin = clientsWith(ADMIN);
  const endpoint = { tenantId: "acme", id: "ep5", url: receiver.url, eventTypes: ["only.ep5"] };
  // ep1 and ep2 take every type: each event goes to them too.
  const deliver = async (eventId: string) => {
    const before = receiver.requests.length;
    await admin.emit.emit({ tenantId: "acme", eventId, eventType: "only.ep5", dataJson: "{}" });
    await receiver.waitForRequests(before + 3);
    const mine = await admin.log.listDeliveries({ tenantId: "acme", eventId, endpointId: "ep5" });
    return mine.deliveries[0]?.id ?? "";
  };
  await admin.endpoints.createEndpoint(endpoint);
  const oldDelivery = await deliver("old5");
  await admin.endpoints.deleteEndpoint({ tenantId: "acme", id: "ep5" });
  await admin.endpoints.createEndpoint(endpoint);
  await deliver("new5");

  const customer = clientsWith(
    (await admin.portal.createPortalLink({ tenantId: "acme", endpointId: "ep5" })).token,
  );
  assert.deepEqual(
    (await customer.log.listDeliveries({})).deliveries.map((d) => d.eventId),
    ["new5"],
  );
  // An attempt's row lands just after its request is answered.
  const attempts = await eventually(
    async () => (await customer.log.listAttempts({})).attempts.map((a) => a.eventId),
    (ids) => ids.length > 0,
  );
  assert.deepEqual(attempts, ["new5"]);
  const watched = (await firstOfStream(customer.log.watchAttempts({ afterAttemptId: 1n }))) as {
    attempt?: { eventId: string };
  };
  assert.equal(watched.attempt?.eventId, "new5", "the backfill starts at the new endpoint's attempts");
  for (const call of [
    () => customer.emit.getEvent({ eventId: "old5" }),
    () => customer.log.describeDelivery({ deliveryId: oldDelivery }),
    () => customer.log.retryDelivery({ deliveryId: oldDelivery }),
  ]) {
    assert.equal(await codeOf(call()), Code.NotFound);
  }
  // The tenant's own tokens still see the whole history.
  assert.deepEqual(
    (await admin.emit.getEvent({ tenantId: "acme", eventId: "old5" })).deliveries
      .map((d) => d.endpointId)
      .sort(),
    ["ep1", "ep2", "ep5"],
  );
  await admin.endpoints.deleteEndpoint({ tenantId: "acme", id: "ep5" });
});

/** Opens WatchAttempts and resolves once the server has answered with its headers (the stream is live). */
async function openWatch(token: string) {
  const controller = new AbortController();
  let live = () => {};
  const headers = new Promise<void>((resolve) => {
    live = resolve;
  });
  const stream = clientsWith(token).log.watchAttempts(
    {},
    { signal: controller.signal, onHeader: () => live() },
  );
  const ended = (async () => {
    try {
      for await (const _ of stream) {
        // Attempts are not the point here.
      }
      return "ended" as const;
    } catch (error) {
      return ConnectError.from(error);
    }
  })();
  await Promise.race([headers, ended]);
  return { ended, close: () => controller.abort() };
}

test("each link has its own stream cap, like an API token", async () => {
  const admin = clientsWith(ADMIN);
  const first = (await admin.portal.createPortalLink({ tenantId: "acme" })).token;
  const second = (await admin.portal.createPortalLink({ tenantId: "acme" })).token;
  const open = [await openWatch(first), await openWatch(first)];
  const extra = await openWatch(first);
  // Were links uncapped, the third stream would stay open: close it after a bound so the test
  // fails (CANCELED) rather than hangs. A refused stream ends long before.
  const bound = setTimeout(extra.close, 5_000);
  const third = await extra.ended;
  clearTimeout(bound);
  assert.ok(third instanceof ConnectError && third.code === Code.ResourceExhausted);
  assert.match(third.rawMessage, /HOOKLINE_MAX_STREAMS_PER_TOKEN/);
  // Another link is not held back by the first one's streams.
  open.push(await openWatch(second));
  for (const stream of open) stream.close();
  for (const stream of open) assert.ok((await stream.ended) instanceof ConnectError);
  assert.equal(
    (await Promise.all(open.map((stream) => stream.ended))).filter(
      (end) => end instanceof ConnectError && end.code === Code.ResourceExhausted,
    ).length,
    0,
  );
});

// Without the bound, a stream that outlives its link would hold the run until CI gives up.
test("a stream opened with a link ends UNAUTHENTICATED when the link expires", {
  timeout: 15_000,
}, async () => {
  const short = await clientsWith(ADMIN).portal.createPortalLink({
    tenantId: "acme",
    ttl: durationFromMs(1500),
  });
  const stream = await openWatch(short.token);
  const ended = await stream.ended;
  assert.ok(ended instanceof ConnectError, `ended with an error, not ${String(ended)}`);
  assert.equal(ended.code, Code.Unauthenticated);
  assert.match(ended.rawMessage, /expired/);
  assert.ok(short.expiresAt && Date.now() >= timestampDate(short.expiresAt).getTime());
});

test("an altered or expired link is UNAUTHENTICATED with a message saying which", async () => {
  const admin = clientsWith(ADMIN);
  const good = await admin.portal.createPortalLink({ tenantId: "acme" });
  const [body, signature = ""] = [
    good.token.slice(0, good.token.lastIndexOf(".")),
    good.token.split(".").at(-1),
  ];
  // A link whose claims were edited to another tenant, keeping the signature.
  const globexClaims = Buffer.from(JSON.stringify({ t: "globex", e: "", x: 4_000_000_000 })).toString(
    "base64url",
  );
  for (const token of [
    `hlp1.${globexClaims}.${signature}`,
    `${body}.${signature.slice(0, 5)}${signature[5] === "A" ? "B" : "A"}${signature.slice(6)}`,
    `${good.token}A`,
    "hlp1.x",
  ]) {
    const refused = await failure(clientsWith(token).endpoints.listEndpoints({}));
    assert.ok(refused !== "ok" && refused.code === Code.Unauthenticated);
    assert.match(refused.rawMessage, /not valid/);
  }

  const short = await admin.portal.createPortalLink({ tenantId: "acme", ttl: durationFromMs(1000) });
  assert.ok(short.expiresAt);
  // Expiry is a time, not an event: wait until it has passed.
  await sleep(Math.max(0, timestampDate(short.expiresAt).getTime() - Date.now()) + 50);
  const expired = await failure(clientsWith(short.token).endpoints.listEndpoints({}));
  assert.ok(expired !== "ok" && expired.code === Code.Unauthenticated);
  assert.match(expired.rawMessage, /expired/);
});

test("CreatePortalLink names a bad ttl and refuses an unknown endpoint", async () => {
  const admin = clientsWith(ADMIN);
  for (const ttl of [durationFromMs(8 * 24 * 3_600_000), durationFromMs(0), durationFromMs(300)]) {
    const bad = await failure(admin.portal.createPortalLink({ tenantId: "acme", ttl }));
    assert.ok(bad !== "ok" && bad.code === Code.InvalidArgument);
    assert.match(bad.rawMessage, /ttl/);
  }
  assert.equal(
    await codeOf(admin.portal.createPortalLink({ tenantId: "acme", endpointId: "nope" })),
    Code.NotFound,
  );
  assert.equal(await codeOf(admin.portal.createPortalLink({ tenantId: "" })), Code.InvalidArgument);
});
