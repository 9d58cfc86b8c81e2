import http2 from "node:http2";
import {
  create,
  type DescMethodUnary,
  type DescService,
  fromBinary,
  isMessage,
  toBinary,
} from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  type ContextValues,
  type HandlerContext,
  type Interceptor,
  type UnaryRequest,
  type UnaryResponse,
} from "@connectrpc/connect";
import { encodeEnvelope } from "@connectrpc/connect/protocol";
import { parseTimeout } from "@connectrpc/connect/protocol-grpc";
import { handlerContext, type LazyContext } from "./grpc-unary-context.js";
import { CANCELED, readUnaryMessage } from "./grpc-unary-message.js";
import { asInvalidBody } from "./invalid-body.js";
import { grpcStatusHeaders } from "./rejection.js";

/** A unary method and the implementation the router was given for it. */
export interface UnaryRoute {
  service: DescService;
  method: DescMethodUnary;
  // biome-ignore lint/suspicious/noExplicitAny: the router holds implementations of every method type
  impl: (request: any, context: HandlerContext) => unknown;
}

/**
 * Told of a call refused from its headers (no or an unknown token): its method, the error, and
 * the address it came from.
 */
export type RefusalListener = (method: string, error: ConnectError, peer: string | undefined) => void;

export interface GrpcUnaryOptions {
  /** Largest request message accepted, in bytes (as Connect's readMaxBytes). */
  readMaxBytes: number;
  /** Applied in the order Connect applies them: the first is the outermost. */
  interceptors: readonly Interceptor[];
  onRefused?: RefusalListener;
}

/** Serves one call, or answers false for a call it does not take (then Connect serves it). */
export type GrpcUnaryServer = (
  request: http2.Http2ServerRequest,
  response: http2.Http2ServerResponse,
  context: (service: DescService) => ContextValues | ConnectError,
) => boolean;

// What Connect answers with, whatever variant of application/grpc the call came with.
const RESPONSE_CONTENT_TYPE = "application/grpc+proto";
// setTimeout's largest wait: a longer one is clamped to 1 ms.
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Unary gRPC calls (HTTP/2, protobuf, uncompressed) served straight from the HTTP/2 stream.
 * connect-node runs every call through its general streaming pipeline (async iterables, linked
 * abort signals that it aborts at the end of every call, Fetch Headers), which costs about
 * 0.55 ms of CPU per call here against about 0.05 ms for the HTTP/2 exchange itself: more than the
 * store and queue work of an Emit. This path does only what a unary gRPC call needs, with the same
 * implementations, interceptors, limits and error encoding (Connect's setTrailerStatus, with the
 * readable grpc-message of grpc-message.ts); anything else (gRPC-Web, Connect, JSON, compressed
 * messages, streams) is left to Connect.
 */
export function createGrpcUnaryServer(
  routes: readonly UnaryRoute[],
  options: GrpcUnaryOptions,
): GrpcUnaryServer {
  const byPath = new Map(
    routes.map((route) => [
      `/${route.service.typeName}/${route.method.name}`,
      withInterceptors(route, options),
    ]),
  );
  return (req, res, contextFor) => {
    const route = byPath.get(req.url);
    if (route === undefined || req.method !== "POST" || !takes(req.headers)) return false;
    const values = contextFor(route.service);
    if (values instanceof ConnectError) {
      options.onRefused?.(req.url.slice(1), values, req.socket.remoteAddress);
      answerError(res, undefined, values);
      return true;
    }
    const timeout = parseTimeout(header(req.headers["grpc-timeout"]), Number.MAX_SAFE_INTEGER);
    if (timeout.error) {
      answerError(res, undefined, timeout.error);
      return true;
    }
    // The deadline runs from the call's arrival, as Connect's does, not from the end of its body.
    const deadline = timeout.timeoutMs === undefined ? undefined : Date.now() + timeout.timeoutMs;
    readUnaryMessage(req, options.readMaxBytes)
      .then(
        (bytes) => serve(route, req, res, values, bytes, deadline),
        (error: unknown) => answerError(res, undefined, ConnectError.from(error)),
      )
      // serve and answerError end every call they can; nothing of one call may take the process.
      .catch(() => res.stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR));
    return true;
  };
}

interface PreparedRoute extends UnaryRoute {
  /** The implementation inside the interceptors, as Connect's invokeUnaryImplementation runs it. */
  call: (request: UnaryRequest, context: HandlerContext) => Promise<UnaryResponse>;
}

type UnaryFn = (request: UnaryRequest) => Promise<UnaryResponse>;

function withInterceptors(route: UnaryRoute, options: GrpcUnaryOptions): PreparedRoute {
  // Wrapped from the innermost out, so the first interceptor listed runs first (as in Connect).
  const innermostFirst = [...options.interceptors].reverse();
  return {
    ...route,
    async call(request, context) {
      let inner: UnaryResponse | undefined;
      let next: UnaryFn = async (req) => {
        // An interceptor that passed on a request of its own (other headers, signal or values)
        // is seen by the implementation, as Connect's mergeRequest does.
        const output = await route.impl(req.message, req === request ? context : merged(context, req));
        inner = {
          stream: false,
          service: route.service,
          method: route.method,
          // Read only if an interceptor looks: the Headers are made on first use.
          get header() {
            return context.responseHeader;
          },
          get trailer() {
            return context.responseTrailer;
          },
          message: isMessage(output, route.method.output)
            ? output
            : create(route.method.output, output as Parameters<typeof create>[1]),
        };
        return inner;
      };
      for (const interceptor of innermostFirst) next = interceptor(next as never) as UnaryFn;
      const response = await next(request);
      // An interceptor that answered with headers or trailers of its own: they are sent, as
      // Connect's copyHeaders sends them.
      if (response !== inner) {
        replaceHeaders(response.header, context.responseHeader);
        replaceHeaders(response.trailer, context.responseTrailer);
      }
      return response;
    },
  };
}

/** The context with an interceptor's request in place of the call's (Connect's mergeRequest). */
function merged(context: HandlerContext, req: UnaryRequest): HandlerContext {
  return Object.create(context, {
    service: { value: req.service },
    requestHeader: { value: req.header },
    signal: { value: req.signal },
    values: { value: req.contextValues },
  }) as HandlerContext;
}

function replaceHeaders(from: Headers, to: Headers): void {
  if (from === to) return;
  for (const key of [...to.keys()]) to.delete(key);
  for (const [key, value] of from) to.set(key, value);
}

/** HTTP/2 protobuf gRPC with no message compression: what Connect would also take as plain gRPC. */
function takes(headers: http2.IncomingHttpHeaders): boolean {
  const type = headers["content-type"];
  if (type !== "application/grpc" && type !== "application/grpc+proto") return false;
  const encoding = headers["grpc-encoding"];
  return encoding === undefined || encoding === "identity";
}

function header(value: string | string[] | undefined): string | null {
  return typeof value === "string" ? value : null;
}

async function serve(
  route: PreparedRoute,
  req: http2.Http2ServerRequest,
  res: http2.Http2ServerResponse,
  values: ContextValues,
  bytes: Uint8Array,
  deadline: number | undefined,
): Promise<void> {
  const abort = new AbortController();
  let answered = false;
  // The signal is aborted only when the call is given up (client gone, deadline passed), never
  // on a normal end: an abort builds a DOMException, which is most of what it costs.
  const giveUp = (error: ConnectError) => {
    if (answered) return;
    abort.abort(error);
    answerError(res, undefined, error);
    answered = true;
  };
  // A body that came in after the deadline: the implementation is not started (an Emit would
  // commit an event its caller is told failed).
  if (deadline !== undefined && deadline <= Date.now()) {
    giveUp(deadlineExceeded());
    return;
  }
  const onClose = () => giveUp(new ConnectError(CANCELED, Code.Canceled));
  res.once("close", onClose);
  // A wait past setTimeout's range (about 24.8 days) would fire at once: no timer, as none is due.
  const waitMs = deadline === undefined ? undefined : Math.max(0, deadline - Date.now());
  const timer =
    waitMs === undefined || waitMs > MAX_TIMER_MS
      ? undefined
      : setTimeout(() => giveUp(deadlineExceeded()), waitMs);
  const context = handlerContext(route, req, values, abort.signal, deadline);
  try {
    let input: UnaryRequest["message"];
    try {
      input = fromBinary(route.method.input, bytes);
    } catch (error) {
      // Parsed outside the interceptors, as Connect does; answered as invalid-body.ts answers Connect's.
      const parse = new ConnectError(
        `parse binary: ${error instanceof Error ? error.message : String(error)}`,
        Code.Internal,
      );
      throw asInvalidBody(parse) ?? parse;
    }
    const response = await route.call(
      {
        stream: false,
        service: route.service,
        method: route.method,
        requestMethod: "POST",
        get url() {
          return context.url;
        },
        signal: abort.signal,
        get header() {
          return context.requestHeader;
        },
        contextValues: values,
        message: input,
      } as UnaryRequest,
      context,
    );
    if (answered) return;
    const envelope = enveloped(route, response.message);
    answered = true;
    const trailers = { ...trailerObject(context), "grpc-status": "0" };
    try {
      // Node checks trailers only once the body is sent, where a refusal is an uncaught exception.
      refuseConnectionHeaders(trailers);
      res.writeHead(200, responseHeaders(context));
      res.addTrailers(trailers);
      res.end(envelope);
    } catch {
      // Headers HTTP/2 refuses (set by an implementation): the call can only be reset.
      res.stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
    }
  } catch (error) {
    if (answered) return;
    answered = true;
    // As Connect: an error that no interceptor turned into a ConnectError says nothing more.
    answerError(
      res,
      context,
      error instanceof ConnectError ? error : new ConnectError("internal error", Code.Internal),
    );
  } finally {
    clearTimeout(timer);
    res.off("close", onClose);
  }
}

/** What Connect answers when a call's grpc-timeout passes. */
const deadlineExceeded = () => new ConnectError("the operation timed out", Code.DeadlineExceeded);

/** The response message, serialized and enveloped; a message that cannot be is INTERNAL, as in Connect. */
function enveloped(route: PreparedRoute, message: UnaryResponse["message"]): Uint8Array {
  let output: Uint8Array;
  try {
    output = toBinary(route.method.output, message as never);
  } catch (error) {
    throw new ConnectError(
      `serialize binary: ${error instanceof Error ? error.message : String(error)}`,
      Code.Internal,
    );
  }
  return encodeEnvelope(0, output);
}

// Connection-specific fields, which HTTP/2 forbids (RFC 9113, 8.2.2); te only as "trailers".
const CONNECTION_HEADERS = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "upgrade",
]);

function refuseConnectionHeaders(fields: Record<string, string>): void {
  for (const [name, value] of Object.entries(fields))
    if (CONNECTION_HEADERS.has(name) || (name === "te" && value !== "trailers"))
      throw new Error(`HTTP/2 forbids the ${name} field`);
}

function responseHeaders(context: LazyContext | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  if (context?.touched.header) for (const [name, value] of context.touched.header) headers[name] = value;
  headers["content-type"] = RESPONSE_CONTENT_TYPE;
  return headers;
}

function trailerObject(context: LazyContext | undefined): Record<string, string> {
  const trailers: Record<string, string> = {};
  if (context?.touched.trailer) for (const [name, value] of context.touched.trailer) trailers[name] = value;
  return trailers;
}

/**
 * An error as a trailers-only response: the status, message and details in one HEADERS frame that
 * ends the stream (gRPC clients such as grpc-js read a status only from a frame that ends it).
 */
function answerError(
  res: http2.Http2ServerResponse,
  context: LazyContext | undefined,
  error: ConnectError,
): void {
  const stream = res.stream;
  if (stream.headersSent || stream.destroyed) return;
  try {
    stream.respond(
      { ":status": 200, ...responseHeaders(context), ...trailerObject(context), ...grpcStatusHeaders(error) },
      { endStream: true },
    );
  } catch {
    // A header HTTP/2 refuses (connection, keep-alive, ...), set by an implementation or carried
    // in the error's metadata: the call can only be reset.
    stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
  }
}
