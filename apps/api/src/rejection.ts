import type { OutgoingHttpHeaders } from "node:http";
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

/**
 * Answers a call with an error before Connect has read its body (a caller that did not
 * authenticate), in the wire format of the protocol the caller speaks: gRPC and gRPC-Web as a
 * trailers-only response, Connect streams as an end-of-stream frame, Connect unary as JSON. An
 * HTTP/1.1 connection is closed after it, so the unread body is never drained.
 */
export function writeRejection(req: NodeServerRequest, res: NodeServerResponse, error: ConnectError): void {
  const contentType =
    String(req.headers["content-type"] ?? "")
      .split(";")[0]
      ?.trim() ?? "";
  const headers: OutgoingHttpHeaders = "stream" in req ? {} : { connection: "close" };
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

/** An error's grpc-status, grpc-message (readable, as grpc-message.ts writes it) and details. */
export function grpcStatusHeaders(error: ConnectError): Record<string, string> {
  const status = setTrailerStatus(new Headers(), error);
  if (status.has("grpc-message")) status.set("grpc-message", encodeGrpcMessage(error.rawMessage));
  return Object.fromEntries(status);
}
