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
    const status = setTrailerStatus(new Headers(), error);
    res.writeHead(200, { ...headers, ...Object.fromEntries(status), "content-type": contentType });
    res.end();
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
