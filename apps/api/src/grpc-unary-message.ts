import type http2 from "node:http2";
import { Code, ConnectError } from "@connectrpc/connect";

/** Bytes before a gRPC message: its flags, then its length. */
const ENVELOPE_HEADER = 5;
const COMPRESSED_FLAG = 0b1;

/** What a client that went away mid-call is told, should anything still reach it. */
export const CANCELED = "the call was cancelled by the client";

/**
 * The one message of a unary gRPC request, with Connect's checks and wording: at most readMaxBytes,
 * exactly one uncompressed envelope, every byte of it present.
 */
export function readUnaryMessage(req: http2.Http2ServerRequest, readMaxBytes: number): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const refuse = (message: string) => {
      req.removeAllListeners("data");
      req.resume();
      reject(new ConnectError(message, Code.ResourceExhausted));
    };
    req.on("data", (chunk: Buffer) => {
      const before = size;
      size += chunk.length;
      chunks.push(chunk);
      // As soon as the envelope's length is in, as Connect does: a client declaring more than the
      // limit is refused before it sends the rest.
      if (before < ENVELOPE_HEADER && size >= ENVELOPE_HEADER) {
        const head = chunks.length === 1 ? chunk : Buffer.concat(chunks, size);
        const length = head.readUInt32BE(1);
        if (length > readMaxBytes) {
          refuse(`message size ${length} is larger than configured readMaxBytes ${readMaxBytes}`);
          return;
        }
      }
      if (size > readMaxBytes + ENVELOPE_HEADER)
        refuse(`message size is larger than configured readMaxBytes ${readMaxBytes}`);
    });
    req.once("error", reject);
    req.once("aborted", () => reject(new ConnectError(CANCELED, Code.Canceled)));
    req.once("end", () => {
      const body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size);
      if (body.length === 0) {
        reject(
          new ConnectError("protocol error: missing input message for unary method", Code.Unimplemented),
        );
        return;
      }
      if (body.length < ENVELOPE_HEADER) {
        reject(new ConnectError("protocol error: incomplete envelope", Code.InvalidArgument));
        return;
      }
      const length = body.readUInt32BE(1);
      if (length > readMaxBytes) {
        reject(
          new ConnectError(
            `message size ${length} is larger than configured readMaxBytes ${readMaxBytes}`,
            Code.ResourceExhausted,
          ),
        );
        return;
      }
      const end = ENVELOPE_HEADER + length;
      if (body.length < end)
        reject(new ConnectError("protocol error: incomplete envelope", Code.InvalidArgument));
      else if (body.length > end)
        reject(
          new ConnectError(
            "protocol error: received extra input message for unary method",
            Code.Unimplemented,
          ),
        );
      else if (((body[0] ?? 0) & COMPRESSED_FLAG) !== 0)
        reject(
          new ConnectError("received compressed envelope, but do not know how to decompress", Code.Internal),
        );
      else resolve(body.subarray(ENVELOPE_HEADER, end));
    });
  });
}
