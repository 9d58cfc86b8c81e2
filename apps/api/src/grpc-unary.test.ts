import assert from "node:assert/strict";
import { once } from "node:events";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { createContextValues, type HandlerContext, type Interceptor } from "@connectrpc/connect";
import { EmitRequestSchema, Health, HealthCheckResponseSchema } from "@hookline/contracts";
import { listDeliveries } from "@hookline/store";
import { readTestSettings } from "@hookline/testkit";
import { createGrpcUnaryServer } from "./grpc-unary.js";
import { startTestApi, type TestApi, uniqueTenant } from "./test-helpers.js";

// Unary gRPC calls take grpc-unary.ts's path instead of Connect's: what a caller sees there.
const settings = readTestSettings(process.env);
const EMIT = "/hookline.v1.EmitService/Emit";

let api: TestApi;
before(async () => {
  // A small limit, so that a message over it is cheap to send.
  api = await startTestApi(settings, { HOOKLINE_MAX_EVENT_BYTES: "1024" });
});
after(() => api.close());

const envelope = (...messages: Uint8Array[]) =>
  Buffer.concat(
    messages.map((payload) => {
      const frame = Buffer.alloc(5 + payload.length);
      frame.writeUInt32BE(payload.length, 1);
      frame.set(payload, 5);
      return frame;
    }),
  );

const emitBytes = (tenantId: string, eventId: string, dataJson = "{}") =>
  toBinary(EmitRequestSchema, create(EmitRequestSchema, { tenantId, eventId, eventType: "t", dataJson }));

interface Answer {
  headers: http2.IncomingHttpHeaders;
  trailers: http2.IncomingHttpHeaders | undefined;
  /** The status wherever it came: in the headers (trailers-only) or the trailers. */
  status: string | undefined;
  message: string | undefined;
  /** Whether the frame that carried the status ended the stream (gRPC clients require it). */
  statusEndedStream: boolean;
  dataBytes: number;
  /** The response body: the enveloped message, if any. */
  body: Buffer;
}

/** One call over a raw HTTP/2 stream, to see exactly which frames carry what. */
async function rawCall(
  path: string,
  body: Uint8Array,
  headers: http2.OutgoingHttpHeaders = {},
  address = api.address,
): Promise<Answer> {
  const session = http2.connect(`http://${address}`);
  try {
    return await new Promise<Answer>((resolve, reject) => {
      const stream = session.request({
        ":method": "POST",
        ":path": path,
        "content-type": "application/grpc",
        te: "trailers",
        ...headers,
      });
      const answer: Answer = {
        headers: {},
        trailers: undefined,
        status: undefined,
        message: undefined,
        statusEndedStream: false,
        dataBytes: 0,
        body: Buffer.alloc(0),
      };
      const take = (frame: http2.IncomingHttpHeaders, flags: number) => {
        if (frame["grpc-status"] === undefined) return;
        answer.status = String(frame["grpc-status"]);
        answer.message = frame["grpc-message"] === undefined ? undefined : String(frame["grpc-message"]);
        answer.statusEndedStream = (flags & http2.constants.NGHTTP2_FLAG_END_STREAM) !== 0;
      };
      stream.on("response", (frame, flags) => {
        answer.headers = frame;
        take(frame, flags);
      });
      stream.on("trailers", (frame, flags) => {
        answer.trailers = frame;
        take(frame, flags);
      });
      stream.on("data", (chunk: Buffer) => {
        answer.dataBytes += chunk.length;
        answer.body = Buffer.concat([answer.body, chunk]);
      });
      // A call the server leaves open fails the test rather than stalling the suite.
      const timer = setTimeout(() => reject(new Error("no answer within 10 s")), 10_000);
      stream.on("close", () => {
        clearTimeout(timer);
        resolve(answer);
      });
      stream.on("error", (error) => {
        clearTimeout(timer);
        reject(error);
      });
      stream.end(body);
    });
  } finally {
    session.close();
  }
}

describe("unary gRPC", () => {
  test("an Emit is answered with one message and grpc-status 0 in trailers that end the stream", async () => {
    const tenant = uniqueTenant("unary-ok");
    await api.call("CreateEndpoint", { tenant_id: tenant, url: "https://example.com/hook" });
    const answer = await rawCall(EMIT, envelope(emitBytes(tenant, "evt-1")));
    assert.equal(answer.headers["content-type"], "application/grpc+proto");
    assert.equal(answer.trailers?.["grpc-status"], "0");
    assert.equal(answer.statusEndedStream, true);
    assert.ok(answer.dataBytes > 5, "one enveloped EmitResponse");
    const { items: deliveries } = await listDeliveries(api.infra.store.db, { tenantId: tenant }, 10, "");
    assert.equal(deliveries.length, 1);
  });

  test("an error is one HEADERS frame that ends the stream, with a readable message", async () => {
    const answer = await rawCall(EMIT, envelope(emitBytes("", "evt-1")));
    assert.equal(answer.status, "3");
    assert.equal(answer.message, "tenant_id is required");
    assert.equal(answer.trailers, undefined, "trailers-only");
    assert.equal(answer.statusEndedStream, true);
    assert.ok(answer.headers["grpc-status-details-bin"], "the google.rpc.BadRequest detail");
  });

  test("a message over the size limit is RESOURCE_EXHAUSTED and writes nothing", async () => {
    const tenant = uniqueTenant("unary-big");
    await api.call("CreateEndpoint", { tenant_id: tenant, url: "https://example.com/hook" });
    const big = JSON.stringify({ note: "x".repeat(200_000) });
    const answer = await rawCall(EMIT, envelope(emitBytes(tenant, "evt-big", big)));
    assert.equal(answer.status, "8");
    const { items: deliveries } = await listDeliveries(api.infra.store.db, { tenantId: tenant }, 10, "");
    assert.equal(deliveries.length, 0);
  });

  test("two messages on a unary method are UNIMPLEMENTED, and none of them is emitted", async () => {
    const tenant = uniqueTenant("unary-two");
    await api.call("CreateEndpoint", { tenant_id: tenant, url: "https://example.com/hook" });
    const answer = await rawCall(EMIT, envelope(emitBytes(tenant, "a"), emitBytes(tenant, "b")));
    assert.equal(answer.status, "12");
    const { items: deliveries } = await listDeliveries(api.infra.store.db, { tenantId: tenant }, 10, "");
    assert.equal(deliveries.length, 0);
  });

  test("a body cut inside its envelope is INVALID_ARGUMENT", async () => {
    const whole = envelope(emitBytes("acme", "evt-cut"));
    const answer = await rawCall(EMIT, whole.subarray(0, whole.length - 2));
    assert.equal(answer.status, "3");
  });

  test("a gzip-compressed call is still served (by Connect)", async () => {
    const tenant = uniqueTenant("unary-gzip");
    await api.call("CreateEndpoint", { tenant_id: tenant, url: "https://example.com/hook" });
    const { gzipSync } = await import("node:zlib");
    const payload = gzipSync(emitBytes(tenant, "evt-gz"));
    const frame = envelope(payload);
    frame[0] = 1; // the compressed flag
    const answer = await rawCall(EMIT, frame, { "grpc-encoding": "gzip" });
    assert.equal(answer.status, "0");
    const { items: deliveries } = await listDeliveries(api.infra.store.db, { tenantId: tenant }, 10, "");
    assert.equal(deliveries.length, 1);
  });

  test("a compressed flag without grpc-encoding is refused", async () => {
    const frame = envelope(emitBytes("acme", "evt-flag"));
    frame[0] = 1;
    const answer = await rawCall(EMIT, frame);
    assert.equal(answer.status, "13");
  });
});

describe("unary gRPC, with implementations that misbehave", () => {
  const CHECK = "/grpc.health.v1.Health/Check";
  let check: (request: unknown, context: HandlerContext) => unknown = () => ({});
  // The one interceptor installed, replaceable per test.
  let intercept: Interceptor = (next) => next;
  let address = "";
  let server: http2.Http2Server;
  before(async () => {
    const serve = createGrpcUnaryServer(
      [{ service: Health, method: Health.method.check, impl: (request, context) => check(request, context) }],
      { readMaxBytes: 1024, interceptors: [(next) => (req) => intercept(next)(req)] },
    );
    server = http2.createServer((req, res) => {
      if (!serve(req, res, () => createContextValues())) res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    address = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  /** A Check call left open, for tests that send its body late or in part. */
  const openCheck = (headers: http2.OutgoingHttpHeaders = {}) => {
    const session = http2.connect(`http://${address}`);
    const stream = session.request({
      ":method": "POST",
      ":path": CHECK,
      "content-type": "application/grpc",
      te: "trailers",
      ...headers,
    });
    const responded = once(stream, "response") as Promise<[http2.IncomingHttpHeaders]>;
    return { session, stream, responded };
  };

  test("a response that cannot be serialized is INTERNAL, not a call left open", async () => {
    check = () => ({ status: 1.5 }); // not an int32
    const answer = await rawCall(CHECK, envelope(new Uint8Array()), {}, address);
    assert.equal(answer.status, "13");
    assert.match(answer.message ?? "", /serialize binary/);
  });

  test("an error whose header HTTP/2 refuses resets the call, and the server lives on", async () => {
    check = (_request, context) => {
      context.responseHeader.set("connection", "close");
      throw new Error("boom");
    };
    await assert.rejects(rawCall(CHECK, envelope(new Uint8Array()), {}, address), /NGHTTP2_INTERNAL_ERROR/);
    check = () => ({ status: 1 });
    const answer = await rawCall(CHECK, envelope(new Uint8Array()), {}, address);
    assert.equal(answer.status, "0");
  });

  test("a grpc-timeout past setTimeout's range is no deadline, not one that has passed", async () => {
    // Longer than the 1 ms that an overflowing setTimeout is clamped to.
    check = async () => {
      await new Promise((resolve) => setTimeout(resolve, 30));
      return { status: 1 };
    };
    const answer = await rawCall(CHECK, envelope(new Uint8Array()), { "grpc-timeout": "8760H" }, address);
    assert.equal(answer.status, "0");
  });

  test("an interceptor's own request and response headers reach the implementation and the caller", async () => {
    intercept = (next) => async (req) => {
      const header = new Headers(req.header);
      header.set("x-tenant-hint", "from-interceptor");
      const res = await next({ ...req, header });
      return { ...res, trailer: new Headers({ "x-served-by": "interceptor" }) };
    };
    try {
      check = (_request, context) => ({
        status: context.requestHeader.get("x-tenant-hint") === "from-interceptor" ? 1 : 2,
      });
      const answer = await rawCall(CHECK, envelope(new Uint8Array()), {}, address);
      assert.equal(answer.status, "0");
      assert.equal(answer.trailers?.["x-served-by"], "interceptor");
      const reply = fromBinary(HealthCheckResponseSchema, answer.body.subarray(5));
      assert.equal(reply.status, 1, "SERVING: the implementation saw the interceptor's header");
    } finally {
      intercept = (next) => next;
    }
  });

  test("a trailer HTTP/2 refuses on a successful call resets the call, and the server lives on", async () => {
    check = (_request, context) => {
      context.responseTrailer.set("keep-alive", "timeout=5");
      return { status: 1 };
    };
    await assert.rejects(rawCall(CHECK, envelope(new Uint8Array()), {}, address), /NGHTTP2_INTERNAL_ERROR/);
    check = () => ({ status: 1 });
    const answer = await rawCall(CHECK, envelope(new Uint8Array()), {}, address);
    assert.equal(answer.status, "0");
  });

  test("a body that arrives after its deadline is DEADLINE_EXCEEDED, and the implementation never runs", async () => {
    let ran = false;
    check = () => {
      ran = true;
      return { status: 1 };
    };
    const { session, stream, responded } = openCheck({ "grpc-timeout": "50m" });
    try {
      // The body is sent only once the deadline has passed.
      await new Promise((resolve) => setTimeout(resolve, 150));
      stream.end(envelope(new Uint8Array()));
      const [headers] = await responded;
      assert.equal(headers["grpc-status"], "4");
      assert.equal(ran, false);
    } finally {
      session.close();
    }
  });

  test("a message declaring more than the limit is refused from its length, before the rest is sent", {
    timeout: 10_000,
  }, async () => {
    const { session, stream, responded } = openCheck();
    try {
      const prefix = Buffer.alloc(5);
      prefix.writeUInt32BE(4_000_000_000, 1);
      stream.write(prefix); // and nothing more: the stream stays open
      const [headers] = await responded;
      assert.equal(headers["grpc-status"], "8");
      assert.match(
        String(headers["grpc-message"]),
        /message size 4000000000 is larger than configured readMaxBytes 1024/,
      );
      stream.close();
    } finally {
      session.close();
    }
  });
});
