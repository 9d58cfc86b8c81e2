import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { Code, ConnectError, createClient, type Interceptor } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { AttemptLogService, EmitService, EndpointService } from "@hookline/contracts";
import { type Receiver, readTestSettings, startReceiver } from "@hookline/testkit";
import { startTestService, type TestService } from "./test-helpers.js";

const settings = readTestSettings(process.env);

const ADMIN = "admin-token-0123456789";
const ACME = "acme-token-0123456789ab";
let svc: TestService;
let receiver: Receiver;
before(async () => {
  svc = await startTestService(settings, { HOOKLINE_API_TOKENS: `${ADMIN}, tenant:acme:${ACME}` });
  receiver = await startReceiver();
});
after(async () => {
  await receiver.close();
  await svc.close();
});

function clientsWith(token: string | undefined) {
  const bearer: Interceptor = (next) => (req) => {
    if (token !== undefined) req.header.set("authorization", `Bearer ${token}`);
    return next(req);
  };
  const transport = createGrpcTransport({ baseUrl: `http://${svc.service.address}`, interceptors: [bearer] });
  return {
    endpoints: createClient(EndpointService, transport),
    emit: createClient(EmitService, transport),
    log: createClient(AttemptLogService, transport),
  };
}

async function codeOf(call: Promise<unknown>): Promise<Code | "ok"> {
  try {
    await call;
    return "ok";
  } catch (error) {
    return ConnectError.from(error).code;
  }
}

async function firstOfStream(stream: AsyncIterable<unknown>): Promise<unknown> {
  for await (const message of stream) return message;
}

test("without a valid token every RPC is UNAUTHENTICATED", async () => {
  for (const token of [undefined, "wrong-token-0123456789", ""]) {
    const c = clientsWith(token);
    assert.equal(await codeOf(c.endpoints.listEndpoints({ tenantId: "acme" })), Code.Unauthenticated);
    assert.equal(
      await codeOf(c.emit.emit({ tenantId: "acme", eventType: "x", dataJson: "{}" })),
      Code.Unauthenticated,
    );
    assert.equal(await codeOf(c.log.listAttempts({})), Code.Unauthenticated);
    assert.equal(
      await codeOf(firstOfStream(c.log.watchAttempts({ tenantId: "acme" }))),
      Code.Unauthenticated,
    );
  }
});

test("a bare token acts on every tenant; a scoped token only on its own", async () => {
  const admin = clientsWith(ADMIN);
  const acme = clientsWith(ACME);
  await admin.endpoints.createEndpoint({ tenantId: "globex", id: "ep", url: receiver.url });
  await acme.endpoints.createEndpoint({ tenantId: "acme", id: "ep", url: receiver.url });
  await admin.emit.emit({ tenantId: "globex", eventId: "g1", eventType: "x", dataJson: "{}" });
  await acme.emit.emit({ tenantId: "acme", eventId: "a1", eventType: "x", dataJson: "{}" });
  await receiver.waitForRequests(2);

  const denied = [
    acme.endpoints.getEndpoint({ tenantId: "globex", id: "ep" }),
    acme.endpoints.listEndpoints({ tenantId: "globex" }),
    acme.endpoints.createEndpoint({ tenantId: "globex", url: receiver.url }),
    acme.endpoints.deleteEndpoint({ tenantId: "globex", id: "ep" }),
    acme.emit.emit({ tenantId: "globex", eventType: "x", dataJson: "{}" }),
    acme.emit.getEvent({ tenantId: "globex", eventId: "g1" }),
    acme.log.listDeliveries({ tenantId: "globex" }),
    acme.log.listAttempts({ tenantId: "globex" }),
    firstOfStream(acme.log.watchAttempts({ tenantId: "globex" })),
  ];
  for (const call of denied) assert.equal(await codeOf(call), Code.PermissionDenied);

  // Empty filters mean "my tenant" for a scoped token, and "every tenant" for a bare one.
  const mine = await acme.log.listDeliveries({});
  assert.deepEqual([...new Set(mine.deliveries.map((d) => d.tenantId))], ["acme"]);
  const all = await admin.log.listDeliveries({});
  assert.deepEqual([...new Set(all.deliveries.map((d) => d.tenantId))].sort(), ["acme", "globex"]);
  const created = await acme.endpoints.createEndpoint({ url: receiver.url });
  assert.equal(created.endpoint?.tenantId, "acme");
});

test("tokens never appear in the logs", async () => {
  await codeOf(clientsWith("leaky-token-0123456789").endpoints.listEndpoints({ tenantId: "acme" }));
  const logs = svc.logLines.join("\n");
  for (const secret of [ADMIN, ACME, "leaky-token-0123456789"]) assert.ok(!logs.includes(secret));
});

test("the api refuses a non-loopback address without tokens unless told it is insecure", async () => {
  await assert.rejects(
    startTestService(settings, { HOOKLINE_API_ADDR: "0.0.0.0:0" }),
    /refusing to serve 0\.0\.0\.0 without HOOKLINE_API_TOKENS/,
  );
  const open = await startTestService(settings, {
    HOOKLINE_API_ADDR: "0.0.0.0:0",
    HOOKLINE_INSECURE_NO_AUTH: "1",
  });
  await open.close();
});
