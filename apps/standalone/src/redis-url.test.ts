import assert from "node:assert/strict";
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { DeliveryStatus, EmitService, EndpointService } from "@hookline/contracts";
import {
  createTestBackend,
  eventually,
  freePort,
  readTestSettings,
  spawnHookline,
  startReceiver,
} from "@hookline/testkit";
import { Redis } from "ioredis";
import { startTestService } from "./test-helpers.js";

const settings = readTestSettings(process.env);

const skip =
  settings.kind !== "servers" && "Redis-specific: runs in the servers pass (the embedded run has no Redis)";

test("REDIS_URL user, password and database number are all used", { skip }, async () => {
  const admin = new Redis({ host: "127.0.0.1", port: 6379 });
  const user = `hl_${Date.now()}`;
  await admin.call("ACL", "SETUSER", user, "on", ">s3cret:pw", "~*", "&*", "+@all");
  const receiver = await startReceiver();
  const svc = await startTestService(settings, { REDIS_URL: `redis://${user}:s3cret%3Apw@127.0.0.1:6379/5` });
  try {
    await svc.endpoints.createEndpoint({ tenantId: "t", id: "ep", url: receiver.url });
    await svc.emit.emit({ tenantId: "t", eventId: "e", eventType: "x", dataJson: "{}" });
    await receiver.waitForRequests(1);
    const db5 = new Redis({ host: "127.0.0.1", port: 6379, db: 5 });
    const keys = await db5.keys(`${svc.backend.prefix}:*`);
    db5.disconnect();
    assert.ok(keys.length > 0, "the queues live in database 5");
    assert.deepEqual(await admin.keys(`${svc.backend.prefix}:*`), [], "and not in database 0");
    const clients = String(await admin.call("CLIENT", "LIST"));
    assert.match(clients, new RegExp(`user=${user}`), "connections authenticate as the URL's user");
  } finally {
    await svc.close();
    await receiver.close();
    await admin.call("ACL", "DELUSER", user);
    admin.disconnect();
  }
  await assert.rejects(
    startTestService(settings, { REDIS_URL: `redis://${user}:wrong@127.0.0.1:6379/5` }),
    /cannot use Redis.*(WRONGPASS|NOAUTH|invalid)/i,
  );
});

test("a rediss:// URL connects over TLS", { skip }, async () => {
  const dir = await mkdtemp(join(tmpdir(), "hookline-tls-"));
  const cert = join(dir, "cert.pem");
  const key = join(dir, "key.pem");
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-days",
      "1",
      "-subj",
      "/CN=localhost",
      "-addext",
      "subjectAltName=DNS:localhost,IP:127.0.0.1",
      "-keyout",
      key,
      "-out",
      cert,
    ],
    { stdio: "ignore" },
  );
  const port = await freePort();
  // TLS only: with the plain port off, a delivery proves the connection was TLS.
  const redis: ChildProcess = spawn(
    "redis-server",
    [
      "--port",
      "0",
      "--tls-port",
      String(port),
      "--tls-cert-file",
      cert,
      "--tls-key-file",
      key,
      "--tls-ca-cert-file",
      cert,
      "--tls-auth-clients",
      "no",
      "--save",
      "",
      "--appendonly",
      "no",
      "--dir",
      dir,
    ],
    { stdio: "ignore" },
  );
  const backend = await createTestBackend(settings, "servers");
  const receiver = await startReceiver();
  try {
    await eventually(
      () => canConnect(port),
      (ok) => ok,
      { timeoutMs: 10_000 },
    );
    const proc = await spawnHookline("standalone", {
      ...backend.env,
      HOOKLINE_API_ADDR: "127.0.0.1:0",
      REDIS_URL: `rediss://localhost:${port}/2`,
      NODE_EXTRA_CA_CERTS: cert,
    });
    try {
      const transport = createGrpcTransport({ baseUrl: `http://${proc.address}` });
      await createClient(EndpointService, transport).createEndpoint({
        tenantId: "t",
        id: "ep",
        url: receiver.url,
      });
      const emit = createClient(EmitService, transport);
      await emit.emit({ tenantId: "t", eventId: "e", eventType: "x", dataJson: "{}" });
      await receiver.waitForRequests(1);
      const { deliveries } = await eventually(
        () => emit.getEvent({ tenantId: "t", eventId: "e" }),
        (r) => r.deliveries[0]?.status === DeliveryStatus.DELIVERED,
      );
      assert.equal(deliveries.length, 1);
    } finally {
      assert.equal(await proc.stop(), 0);
    }
  } finally {
    await receiver.close();
    redis.kill();
    await once(redis, "exit");
    await backend.dispose();
    await rm(dir, { recursive: true, force: true });
  }
});

async function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1", () => {
      socket.destroy();
      resolve(true);
    });
    socket.on("error", () => resolve(false));
  });
}
