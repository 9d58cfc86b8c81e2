import {
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
import { withInvalidBodyErrors } from "./invalid-body.js";
import type { NodeServerRequest, NodeServerResponse } from "./node-types.js";
import { writeRejection } from "./rejection.js";

export interface RequestHandlerOptions {
  routes: (router: ConnectRouter) => void;
  interceptors: Interceptor[];
  /** Largest request message accepted, in bytes. */
  readMaxBytes: number;
  authenticate: Authenticator;
}

/**
 * The Node request handler for every RPC (what connectNodeAdapter does, plus two things it cannot):
 * the caller is authenticated from its headers before Connect reads or parses the body, and a
 * protobuf body that does not parse is answered INVALID_ARGUMENT instead of INTERNAL.
 */
export function createRequestHandler(
  options: RequestHandlerOptions,
): (req: NodeServerRequest, res: NodeServerResponse) => void {
  const router = createConnectRouter({
    interceptors: options.interceptors,
    readMaxBytes: options.readMaxBytes,
    acceptCompression: [compressionGzip, compressionBrotli],
    // Proto3 JSON's default: a misspelt field or enum name is an error, not silently dropped.
    jsonOptions: { ignoreUnknownFields: false },
  });
  options.routes(router);
  const handlers = new Map(router.handlers.map((handler) => [handler.requestPath, handler]));
  return (req, res) => {
    const handler = handlers.get((req.url ?? "").split("?", 1)[0] ?? "");
    if (!handler) {
      res.writeHead(404);
      res.end();
      return;
    }
    let request: ReturnType<typeof universalRequestFromNodeRequest>;
    try {
      const principal = options.authenticate(handler.service.typeName, req.headers.authorization);
      request = universalRequestFromNodeRequest(
        req,
        res,
        undefined,
        allowEarlyHeaders(createContextValues().set(principalKey, principal), res),
      );
    } catch (error) {
      writeRejection(req, res, ConnectError.from(error));
      return;
    }
    handler(request)
      .then((response) => universalResponseToNodeResponse(withInvalidBodyErrors(response), res))
      // The caller went away mid-response: nothing is left to tell it.
      .catch(() => {});
  };
}
