import type http from "node:http";
import type http2 from "node:http2";

type NodeRequest = http.IncomingMessage | http2.Http2ServerRequest;
type NodeResponse = http.ServerResponse | http2.Http2ServerResponse;
type NodeHandler = (req: NodeRequest, res: NodeResponse) => void;

/**
 * Percent-encodes an error message the way the gRPC spec's grammar prefers: only "%" and bytes
 * outside 0x20-0x7E are escaped, so "data_json is not valid JSON" stays readable on the wire.
 */
export function encodeGrpcMessage(text: string): string {
  let out = "";
  for (const byte of Buffer.from(text, "utf8")) {
    out +=
      byte >= 0x20 && byte <= 0x7e && byte !== 0x25
        ? String.fromCharCode(byte)
        : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

/**
 * Rewrites the grpc-message trailer that connect-es encodes with encodeURIComponent ("," as %2C,
 * spaces as %20) into encodeGrpcMessage's form. Both are valid gRPC, but @grpc/grpc-js decodes
 * with decodeURI, which leaves reserved escapes such as %2C in the text its users read, and
 * proxies and logs show the escaped form raw.
 */
export function withReadableGrpcMessages(handler: NodeHandler): NodeHandler {
  return (req, res) => {
    const addTrailers = res.addTrailers.bind(res);
    res.addTrailers = (trailers: http.OutgoingHttpHeaders | readonly [string, string][]) => {
      if (!Array.isArray(trailers)) {
        const record = trailers as http.OutgoingHttpHeaders;
        const message = record["grpc-message"];
        if (typeof message === "string") record["grpc-message"] = reencode(message);
      }
      addTrailers(trailers as http.OutgoingHttpHeaders);
    };
    handler(req, res);
  };
}

function reencode(connectEncoded: string): string {
  try {
    return encodeGrpcMessage(decodeURIComponent(connectEncoded));
  } catch {
    return connectEncoded; // not percent-encoding after all: pass it on as it came
  }
}
