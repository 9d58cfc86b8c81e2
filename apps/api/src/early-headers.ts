import http from "node:http";
import type http2 from "node:http2";
import {
  type ContextValues,
  createContextKey,
  createContextValues,
  type HandlerContext,
} from "@connectrpc/connect";

type NodeRequest = http.IncomingMessage | http2.Http2ServerRequest;
type NodeResponse = http.ServerResponse | http2.Http2ServerResponse;

const sendHeadersKey = createContextKey<(headers: Headers) => void>(() => {}, {
  description: "send the response headers now",
});

/**
 * Sends a streaming call's response headers now, before its first message. Connect writes them
 * only with the first message, so the client of a quiet stream (grpc-go's `stream.Header()`, a
 * proxy waiting for headers) cannot tell that the call was accepted.
 */
export function sendHeadersNow(context: HandlerContext): void {
  context.values.get(sendHeadersKey)(context.responseHeader);
}

/** Lets handlers behind connect-node's adapter call sendHeadersNow. */
export interface EarlyHeaders {
  /** The adapter's contextValues option. */
  contextValues(req: NodeRequest): ContextValues;
  /** Wraps the adapter's handler, the one given to the HTTP servers. */
  wrap(handler: (req: NodeRequest, res: NodeResponse) => void): (req: NodeRequest, res: NodeResponse) => void;
}

export function earlyHeaders(): EarlyHeaders {
  const responses = new WeakMap<NodeRequest, NodeResponse>();
  return {
    contextValues(req) {
      const values = createContextValues();
      const res = responses.get(req);
      if (res) values.set(sendHeadersKey, (headers) => writeHeadOnce(res, headers));
      return values;
    },
    wrap(handler) {
      return (req, res) => {
        responses.set(req, res);
        handler(req, res);
      };
    },
  };
}

function writeHeadOnce(res: NodeResponse, headers: Headers): void {
  if (res.headersSent) return;
  res.writeHead(200, Object.fromEntries(headers));
  // HTTP/2 sends the head on writeHead; HTTP/1.1 would hold it until the first body byte.
  if (res instanceof http.ServerResponse) res.flushHeaders();
  // connect-node writes the head again with the first message, unconditionally, and a second
  // writeHead throws: the same headers have gone already, so that call has nothing left to do.
  res.writeHead = (() => res) as typeof res.writeHead;
}
