import { Code, ConnectError } from "@connectrpc/connect";
import type { UniversalServerResponse } from "@connectrpc/connect/protocol";
import { codeToHttpStatus, errorToJsonBytes } from "@connectrpc/connect/protocol-connect";
import { findTrailerError, setTrailerStatus } from "@connectrpc/connect/protocol-grpc";
import { trailerFlag, trailerParse, trailerSerialize } from "@connectrpc/connect/protocol-grpc-web";

// Connect reports a protobuf body that does not parse as INTERNAL "parse binary: ..."; it is the
// caller's mistake, so it is answered INVALID_ARGUMENT (JSON bodies already are).
const PARSE_ERROR = /^parse binary: /;

/** The INVALID_ARGUMENT for a request body that is not a valid protobuf message, or undefined. */
export function asInvalidBody(error: ConnectError): ConnectError | undefined {
  if (error.code !== Code.Internal || !PARSE_ERROR.test(error.rawMessage)) return undefined;
  return new ConnectError(
    `the request body is not a valid protobuf message: ${error.rawMessage.replace(PARSE_ERROR, "")}`,
    Code.InvalidArgument,
  );
}

/**
 * Rewrites a unary response whose error is a protobuf parse error into INVALID_ARGUMENT, for each
 * protocol: the gRPC trailer, the gRPC-Web trailer frame, or the Connect JSON error (HTTP 500).
 * For a Connect JSON call, nameJsonField may also replace a refusal (HTTP 400) that names no field.
 */
export function withInvalidBodyErrors(
  response: UniversalServerResponse,
  nameJsonField?: (message: string) => ConnectError | undefined,
): UniversalServerResponse {
  const body = response.body;
  if (body === undefined || !(Symbol.asyncIterator in body)) return response;
  if (response.status === 500) {
    return rewriteConnectUnary(response, body, (code, message) =>
      code === "internal" ? asInvalidBody(new ConnectError(message, Code.Internal)) : undefined,
    );
  }
  if (response.status === 400 && nameJsonField) {
    return rewriteConnectUnary(response, body, (code, message) =>
      code === "invalid_argument" ? nameJsonField(message) : undefined,
    );
  }
  const trailer = response.trailer;
  return {
    ...response,
    body: (async function* () {
      for await (const chunk of body) yield rewriteGrpcWebTrailer(chunk);
      if (trailer) rewriteTrailer(trailer);
    })(),
  };
}

function rewriteTrailer(trailer: Headers): void {
  const error = findTrailerError(trailer);
  const invalid = error && asInvalidBody(error);
  if (invalid) setTrailerStatus(trailer, invalid);
}

function rewriteGrpcWebTrailer(chunk: Uint8Array): Uint8Array {
  if (chunk.length < 5 || chunk[0] !== trailerFlag) return chunk;
  const trailer = trailerParse(chunk.subarray(5));
  const before = trailer.get("grpc-status");
  rewriteTrailer(trailer);
  if (trailer.get("grpc-status") === before) return chunk;
  const data = trailerSerialize(trailer);
  const frame = new Uint8Array(5 + data.length);
  frame[0] = trailerFlag;
  new DataView(frame.buffer).setUint32(1, data.length);
  frame.set(data, 5);
  return frame;
}

/** What replaces a Connect error (its code and message as sent), or undefined to keep it. */
type Replacement = (code: string, message: string) => ConnectError | undefined;

function rewriteConnectUnary(
  response: UniversalServerResponse,
  body: AsyncIterable<Uint8Array>,
  replace: Replacement,
): UniversalServerResponse {
  let replaced: { status: number; bytes: Uint8Array } | undefined;
  const chunks: Uint8Array[] = [];
  const collected = (async function* () {
    for await (const chunk of body) chunks.push(chunk);
    const bytes = Buffer.concat(chunks);
    const invalid = replacementOf(bytes, replace);
    replaced = invalid
      ? { status: codeToHttpStatus(invalid.code), bytes: errorToJsonBytes(invalid, undefined) }
      : { status: response.status, bytes };
    response.header?.set("content-length", String(replaced.bytes.byteLength));
    yield replaced.bytes;
  })();
  // universalResponseToNodeResponse reads the status after the first chunk, so it sees the rewrite.
  return {
    ...response,
    get status() {
      return replaced?.status ?? response.status;
    },
    body: collected,
  };
}

function replacementOf(bytes: Uint8Array, replace: Replacement): ConnectError | undefined {
  try {
    const json = JSON.parse(Buffer.from(bytes).toString()) as { code?: unknown; message?: unknown };
    if (typeof json.code !== "string" || typeof json.message !== "string") return undefined;
    return replace(json.code, json.message);
  } catch {
    return undefined;
  }
}
