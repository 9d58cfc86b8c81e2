import type http2 from "node:http2";
import type { DescMethodUnary, DescService } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  type ConnectRouter,
  createConnectRouter,
  createContextValues,
  type Interceptor,
} from "@connectrpc/connect";
import {
  compressionBrotli,
  compressionGzip,
  universalRequestFromNodeRequest,
  universalResponseToNodeResponse,
} from "@connectrpc/connect-node";
import { type Authenticator, principalKey } from "./auth.js";
import { allowEarlyHeaders } from "./early-headers.js";
import { createGrpcUnaryServer, type RefusalListener, type UnaryRoute } from "./grpc-unary.js";
import { withInvalidBodyErrors } from "./invalid-body.js";
import { jsonFieldNamer, namedJsonError } from "./json-field-errors.js";
import type { NodeServerRequest, NodeServerResponse } from "./node-types.js";
import { writeRejection } from "./rejection.js";
import { arrivedAtKey } from "./rpc-metrics.js";

export interface RequestHandlerOptions {
  routes: (router: ConnectRouter) => void;
  interceptors: Interceptor[];
  /** Largest request message accepted, in bytes. */
  readMaxBytes: number;
  /** The same for a JSON body (Connect JSON, gRPC-Web or gRPC with +json). */
  jsonReadMaxBytes: number;
  authenticate: Authenticator;
  onRefused?: RefusalListener;
}

/**
 * The Node request handler for every RPC (what connectNodeAdapter does, plus what it cannot): the
 * caller is authenticated from its headers before Connect reads or parses the body, a protobuf
 * body that does not parse is answered INVALID_ARGUMENT instead of INTERNAL, and plain unary gRPC
 * calls (most of the traffic: Emit) take the lighter path of grpc-unary.ts.
 */
export function createRequestHandler(
  options: RequestHandlerOptions,
): (req: NodeServerRequest, res: NodeServerResponse) => void {
  const routerWith = (readMaxBytes: number) =>
    createConnectRouter({
      interceptors: options.interceptors,
      readMaxBytes,
      acceptCompression: [compressionGzip, compressionBrotli],
      jsonOptions: JSON_OPTIONS,
    });
  // One router per body format, the same services on each: Connect's read limit is per router,
  // and a JSON body needs more room for the same message.
  const router = routerWith(options.readMaxBytes);
  const jsonRouter = routerWith(options.jsonReadMaxBytes);
  const unary: UnaryRoute[] = [];
  options.routes(recordingUnaryRoutes(router, unary, jsonRouter));
  const handlersOf = (routed: ConnectRouter) =>
    new Map(routed.handlers.map((handler) => [handler.requestPath, handler]));
  const handlers = handlersOf(router);
  const jsonHandlers = handlersOf(jsonRouter);
  const grpcUnary = createGrpcUnaryServer(unary, options);
  const contextFor = (req: NodeServerRequest, arrivedAt: number) => (service: DescService) => {
    try {
      return createContextValues()
        .set(principalKey, options.authenticate(service.typeName, req.headers))
        .set(arrivedAtKey, arrivedAt);
    } catch (error) {
      return ConnectError.from(error);
    }
  };
  return (req, res) => {
    const arrivedAt = performance.now();
    if ("stream" in req && grpcUnary(req, res as http2.Http2ServerResponse, contextFor(req, arrivedAt)))
      return;
    const path = (req.url ?? "").split("?", 1)[0] ?? "";
    const handler = (isJson(req) ? jsonHandlers : handlers).get(path);
    if (!handler) {
      res.writeHead(404);
      res.end();
      return;
    }
    let request: ReturnType<typeof universalRequestFromNodeRequest>;
    try {
      const principal = options.authenticate(handler.service.typeName, req.headers);
      request = universalRequestFromNodeRequest(
        req,
        res,
        undefined,
        allowEarlyHeaders(
          createContextValues().set(principalKey, principal).set(arrivedAtKey, arrivedAt),
          res,
        ),
      );
    } catch (error) {
      const rejection = ConnectError.from(error);
      options.onRefused?.(
        `${handler.service.typeName}/${handler.method.name}`,
        rejection,
        req.socket.remoteAddress,
      );
      writeRejection(req, res, rejection, isJson(req) ? options.jsonReadMaxBytes : options.readMaxBytes);
      return;
    }
    // A Connect unary JSON call's decoding errors are named as other refused fields are; one with
    // a Timestamp, Duration or enum keeps its body, to name the field behind an error naming none.
    const jsonUnary =
      contentType(req).startsWith("application/json") && handler.method.methodKind === "unary";
    const namer = jsonUnary ? jsonFieldNamer(handler.method.input) : undefined;
    if (namer && Symbol.asyncIterator in Object(request.body)) {
      request = { ...request, body: namer.record(request.body as AsyncIterable<Uint8Array>) };
    }
    const nameJsonField = jsonUnary
      ? (message: string) => namedJsonError(handler.method.input, message) ?? namer?.name(message)
      : undefined;
    handler(request)
      .then((response) =>
        universalResponseToNodeResponse(withInvalidBodyErrors(response, nameJsonField), res),
      )
      // The caller went away mid-response: nothing is left to tell it.
      .catch(() => {});
  };
}

/**
 * Connect reads a JSON body with a lenient TextDecoder, which turns bytes that are not UTF-8 into
 * U+FFFD: an id or data_json would be stored other than as it was sent. gRPC's protobuf path
 * already refuses such bytes. (Connect passes jsonOptions on to its JSON serialization, which
 * takes a textDecoder.)
 */
const strictUtf8 = new TextDecoder("utf-8", { fatal: true });
const JSON_OPTIONS = {
  // Proto3 JSON's default: a misspelt field or enum name is an error, not silently dropped.
  ignoreUnknownFields: false,
  textDecoder: {
    decode(bytes?: Uint8Array): string {
      try {
        return strictUtf8.decode(bytes);
      } catch {
        throw new ConnectError("the request body is not valid UTF-8", Code.InvalidArgument);
      }
    },
  },
};

/** A body in JSON: Connect's application/json and the +json forms of the streaming protocols. */
function isJson(req: NodeServerRequest): boolean {
  const type = contentType(req);
  return type.startsWith("application/json") || /^application\/(connect|grpc|grpc-web)\+json/.test(type);
}

/** Media types are case-insensitive, as Connect reads them. */
function contentType(req: NodeServerRequest): string {
  return (req.headers["content-type"] ?? "").toLowerCase();
}

/**
 * The router, noting each unary method registered through service() with its implementation,
 * and registering every service on the JSON router too.
 */
function recordingUnaryRoutes(
  router: ConnectRouter,
  unary: UnaryRoute[],
  jsonRouter: ConnectRouter,
): ConnectRouter {
  return {
    get handlers() {
      return router.handlers;
    },
    rpc: ((...args: Parameters<ConnectRouter["rpc"]>) => {
      jsonRouter.rpc(...args);
      return router.rpc(...args);
    }) as ConnectRouter["rpc"],
    service(service, implementation, options) {
      const impl = implementation as Record<string, UnaryRoute["impl"] | undefined>;
      // Per-service options (interceptors, limits) are Connect's to apply: such a service stays there.
      if (options === undefined)
        for (const method of service.methods) {
          const fn = impl[method.localName];
          if (method.methodKind === "unary" && fn)
            unary.push({ service, method: method as DescMethodUnary, impl: fn.bind(implementation) });
        }
      router.service(service, implementation, options);
      jsonRouter.service(service, implementation, options);
      return this;
    },
  };
}
