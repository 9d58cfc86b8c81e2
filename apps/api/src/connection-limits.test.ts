import assert from "node:assert/strict";
import { once } from "node:events";
import http2 from "node:http2";
import net from "node:net";
import { after, before, describe, test } from "node:test";
import { readTestSettings } from "@hookline/testkit";
import { startTestApi, type TestApi } from "./test-helpers.js";

const settings = readTestSettings(process.env);
const HANDSHAKE_MS = 400;
const IDLE_MS = 800;

/** Opens a raw TCP connection to the api, runs `send` on it, and resolves with how long it lived. */
async function lifetime(address: string, send: (socket: net.Socket) => void): Promise<number> {
  const [host, port] = address.split(":");
  const socket = net.connect(Number(port), host);
  socket.on("error", () => {});
  socket.on("data", () => {});
  await once(socket, "connect");
  const started = Date.now();
  send(socket);
  await once(socket, "close");
  return Date.now() - started;
}

const HEALTH = "/grpc.health.v1.Health/Check";
/** One gRPC health check on an HTTP/2 session; resolves with its grpc-status. */
function healthCheck(session: http2.ClientHttp2Session): Promise<string> {
  return new Promise((resolve, reject) => {
    const stream = session.request({
      ":method": "POST",
      ":path": HEALTH,
      "content-type": "application/grpc",
    });
    let status = "";
    const take = (headers: http2.IncomingHttpHeaders) => {
      if (headers["grpc-status"] !== undefined) status = String(headers["grpc-status"]);
    };
    stream.on("response", take);
    stream.on("trailers", take);
    stream.on("data", () => {});
    stream.on("close", () => resolve(status));
    stream.on("error", reject);
    stream.end(Buffer.alloc(5));
  });
}

describe("connections that do not complete a request are closed", { timeout: 30_000 }, () => {
  let api: TestApi;
  before(async () => {
    api = await startTestApi(settings, {
      HOOKLINE_HANDSHAKE_TIMEOUT: `${HANDSHAKE_MS}ms`,
      HOOKLINE_IDLE_TIMEOUT: `${IDLE_MS}ms`,
      HOOKLINE_HTTP2_MAX_STREAMS: "7",
      HOOKLINE_MAX_HEADER_BYTES: "8192",
    });
  });
  after(() => api?.close());

  // Generous upper bounds: the machine is shared; without the limits these stayed open for minutes.
  const bound = HANDSHAKE_MS + 3000;

  test("a socket that sends nothing", async () => {
    assert.ok((await lifetime(api.address, () => {})) < bound);
  });

  test("a socket that sends one byte", async () => {
    assert.ok((await lifetime(api.address, (s) => s.write("P"))) < bound);
  });

  test("a socket that sends only the HTTP/2 preface", async () => {
    assert.ok((await lifetime(api.address, (s) => s.write("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"))) < bound);
  });

  test("a socket that keeps sending a header line now and then (slowloris)", async () => {
    let timer: NodeJS.Timeout | undefined;
    const lived = await lifetime(api.address, (socket) => {
      socket.write("POST /hookline.v1.EmitService/Emit HTTP/1.1\r\nHost: x\r\n");
      let n = 0;
      timer = setInterval(() => socket.write(`x-slow-${n++}: 1\r\n`), 100);
    });
    clearInterval(timer);
    assert.ok(lived < bound, `lived ${lived} ms`);
  });

  test("an HTTP/2 session with no stream is closed once idle; one with a stream stays", async () => {
    const idle = http2.connect(`http://${api.address}`);
    idle.on("error", () => {});
    assert.equal(await healthCheck(idle), "0");
    const idleClosed = once(idle, "close");
    // A Health.Watch stream that has nothing to say for longer than the idle timeout is not idle.
    const busy = http2.connect(`http://${api.address}`);
    busy.on("error", () => {});
    const watch = busy.request({
      ":method": "POST",
      ":path": "/grpc.health.v1.Health/Watch",
      "content-type": "application/grpc",
    });
    watch.on("data", () => {});
    watch.end(Buffer.alloc(5));
    await once(watch, "response");
    await idleClosed;
    await new Promise((resolve) => setTimeout(resolve, IDLE_MS * 2));
    assert.equal(busy.closed || busy.destroyed, false, "the session with a stream is still open");
    watch.close();
    busy.close();
  });

  test("an HTTP/1.1 keep-alive connection is closed once idle", async () => {
    const lived = await lifetime(api.address, (socket) => {
      socket.write(
        "POST /grpc.health.v1.Health/Check HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}",
      );
    });
    assert.ok(lived >= IDLE_MS - 50 && lived < IDLE_MS + 3000, `lived ${lived} ms`);
  });

  test("HTTP/2 settings limit concurrent streams and header list size", async () => {
    const session = http2.connect(`http://${api.address}`);
    session.on("error", () => {});
    await once(session, "remoteSettings");
    assert.equal(session.remoteSettings.maxConcurrentStreams, 7);
    assert.equal(session.remoteSettings.maxHeaderListSize, 8192);
    session.close();
  });

  test("an HTTP/1.1 header block over the limit is refused with 431", async () => {
    const response = await fetch(`http://${api.address}${HEALTH}`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-big": "x".repeat(16 * 1024) },
      body: "{}",
    });
    assert.equal(response.status, 431);
  });
});

describe("HOOKLINE_MAX_CONNECTIONS", { timeout: 30_000 }, () => {
  let api: TestApi;
  before(async () => {
    api = await startTestApi(settings, { HOOKLINE_MAX_CONNECTIONS: "3" });
  });
  after(() => api?.close());

  test("connections beyond the cap are closed at once; a freed slot serves again", async () => {
    const sessions = Array.from({ length: 3 }, () => http2.connect(`http://${api.address}`));
    for (const session of sessions) {
      session.on("error", () => {});
      assert.equal(await healthCheck(session), "0");
    }
    const extra = http2.connect(`http://${api.address}`);
    extra.on("error", () => {});
    await once(extra, "close");
    const first = sessions.shift();
    first?.close();
    if (first) await once(first, "close");
    // The server sees the close a moment after the client: retry until the slot is free.
    let status = "";
    for (let i = 0; i < 50 && status !== "0"; i++) {
      const again = http2.connect(`http://${api.address}`);
      again.on("error", () => {});
      status = await healthCheck(again).catch(() => "");
      again.close();
    }
    assert.equal(status, "0");
    for (const session of sessions) session.close();
  });
});
