import type { IncomingMessage, OutgoingHttpHeaders } from "node:http";
import type { ConnectError } from "@connectrpc/connect";
import { encodeEnvelope } from "@connectrpc/connect/protocol";
import {
  codeToHttpStatus,
  endStreamFlag,
  endStreamToJson,
  errorToJsonBytes,
} from "@connectrpc/connect/protocol-connect";
import { setTrailerStatus } from "@connectrpc/connect/protocol-grpc";
import { encodeGrpcMessage } from "./grpc-message.js";
import type { NodeServerRequest, NodeServerResponse } from "./node-types.js";

/** How long an HTTP/1.1 caller refused before its body was read has to finish sending it. */
const LINGER_MS = 2000;

/**
 * Answers a call with an error before Connect has read its body (a caller that did not
 * authenticate), in the wire format of the protocol the caller speaks: gRPC and gRPC-Web as a
 * trailers-only response, Connect streams as an end-of-stream frame, Connect unary as JSON. On
 * HTTP/1.1 the body is then read and dropped, up to maxBodyBytes (see lingerOrClose).
 */
export function writeRejection(
  req: NodeServerRequest,
  res: NodeServerResponse,
  error: ConnectError,
  maxBodyBytes: number,
): void {
  const contentType =
    String(req.headers["content-type"] ?? "")
      .split(";")[0]
      ?.trim() ?? "";
  const headers: OutgoingHttpHeaders = "stream" in req ? {} : lingerOrClose(req, maxBodyBytes);
  if (contentType.startsWith("application/grpc")) {
    const status = { ...grpcStatusHeaders(error), "content-type": contentType };
    // On HTTP/2 the status must come in the HEADERS frame that ends the stream: writeHead and end
    // send that frame open and end the stream apart, which grpc-js reads as a call ended without
    // a status (INTERNAL instead of UNAUTHENTICATED).
    if ("stream" in res) res.stream.respond({ ":status": 200, ...status }, { endStream: true });
    else res.writeHead(200, { ...headers, ...status }).end();
    return;
  }
  if (contentType.startsWith("application/connect+")) {
    const json = new TextEncoder().encode(JSON.stringify(endStreamToJson(new Headers(), error, undefined)));
    res.writeHead(200, { ...headers, "content-type": contentType });
    res.end(encodeEnvelope(endStreamFlag, json));
    return;
  }
  res.writeHead(codeToHttpStatus(error.code), { ...headers, "content-type": "application/json" });
  res.end(errorToJsonBytes(error, undefined));
}

/**
 * An HTTP/1.1 caller still sending its body when the connection closes sees its write fail
 * (EPIPE) instead of the answer: about half of a Node client's refused 100 KB calls did. So the
 * body is read and dropped, as far as a call's body may go and for at most LINGER_MS, and the
 * connection stays open for the next call; a larger body (declared, or as it comes) or a slower
 * one is not read further, and its connection closes.
 */
function lingerOrClose(req: IncomingMessage, maxBodyBytes: number): OutgoingHttpHeaders {
  // A largest message in its envelope (gRPC-Web, Connect streams) is 5 bytes longer.
  const bound = maxBodyBytes + 5;
  if (Number(req.headers["content-length"] ?? 0) > bound) return { connection: "close" };
  const cut = setTimeout(() => req.socket.destroy(), LINGER_MS).unref();
  let read = 0;
  req.on("data", (chunk: Buffer) => {
    read += chunk.length;
    if (read > bound) req.socket.destroy();
  });
  req.on("close", () => clearTimeout(cut));
  return {};
}

/** An error's grpc-status, grpc-message (readable, as grpc-message.ts writes it) and details. */
export function grpcStatusHeaders(error: ConnectError): Record<string, string> {
  const status = setTrailerStatus(new Headers(), error);
  if (status.has("grpc-message")) status.set("grpc-message", encodeGrpcMessage(error.rawMessage));
  return Object.fromEntries(status);
}
