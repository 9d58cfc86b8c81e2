import http from "node:http";
import { type ContextValues, createContextKey, type HandlerContext } from "@connectrpc/connect";
import type { NodeServerResponse } from "./node-types.js";

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

/** Lets the handlers of this call send its headers early (see sendHeadersNow). */
export function allowEarlyHeaders(values: ContextValues, res: NodeServerResponse): ContextValues {
  return values.set(sendHeadersKey, (headers) => writeHeadOnce(res, headers));
}

function writeHeadOnce(res: NodeServerResponse, headers: Headers): void {
  if (res.headersSent) return;
  res.writeHead(200, Object.fromEntries(headers));
  // HTTP/2 sends the head on writeHead; HTTP/1.1 would hold it until the first body byte.
  if (res instanceof http.ServerResponse) res.flushHeaders();
  // connect-node writes the head again with the first message, unconditionally, and a second
  // writeHead throws: the same headers have gone already, so that call has nothing left to do.
  res.writeHead = (() => res) as typeof res.writeHead;
}
