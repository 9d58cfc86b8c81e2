import type { Readable } from "node:stream";
import { StringDecoder } from "node:string_decoder";

/**
 * Reads at most `maxBytes` of a response body as UTF-8 and then stops, destroying the stream, so
 * an endpoint that streams forever cannot hold an attempt. If the stream fails or is aborted
 * (the attempt deadline), what arrived so far is kept: the receiver did answer.
 */
export async function readCapped(body: Readable, maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let length = 0;
  let truncated = false;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      const room = maxBytes - length;
      if (chunk.length >= room) {
        chunks.push(chunk.length === room ? chunk : chunk.subarray(0, room));
        length += room;
        truncated = chunk.length > room || !body.readableEnded;
        break;
      }
      chunks.push(chunk);
      length += chunk.length;
    }
  } catch {
    truncated = true;
  } finally {
    if (!body.destroyed && !body.readableEnded) body.destroy();
  }
  const bytes = chunks.length === 1 && chunks[0] !== undefined ? chunks[0] : Buffer.concat(chunks, length);
  // A cut can split a multi-byte character: StringDecoder.write holds back its incomplete tail.
  return truncated ? new StringDecoder("utf8").write(bytes) : bytes.toString("utf8");
}
