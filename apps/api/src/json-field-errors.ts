import { type DescMessage, fromJson, type JsonValue } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { BadRequestSchema } from "@hookline/contracts";

// protobuf-es names the field when a scalar is malformed, but not when a well-known type is:
// `"since": "yesterday"` reads "cannot decode message google.protobuf.Timestamp from JSON: invalid
// RFC 3339 string", which leaves the caller to guess between since, created_from and created_until.
const UNNAMED = /^cannot decode message google\.protobuf\.(\w+) from JSON: (.*)$/s;

/**
 * Keeps a copy of a JSON request body as Connect reads it (Connect bounds it by its read limit),
 * and names the field behind an error protobuf-es left unnamed: the INVALID_ARGUMENT to answer
 * instead, with a BadRequest detail as every other refused field has, or undefined. Undefined
 * for a request with no such field (Emit's bodies are the large ones): nothing is kept then.
 */
export function jsonFieldNamer(input: DescMessage):
  | {
      record(body: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array>;
      name(message: string): ConnectError | undefined;
    }
  | undefined {
  const wellKnown = input.fields.some(
    (field) => field.fieldKind === "message" && field.message.typeName.startsWith("google.protobuf."),
  );
  if (!wellKnown) return undefined;
  const chunks: Uint8Array[] = [];
  return {
    async *record(body) {
      for await (const chunk of body) {
        chunks.push(chunk);
        yield chunk;
      }
    },
    name(message) {
      const match = UNNAMED.exec(message);
      if (!match) return undefined;
      const [, typeName = "", reason = ""] = match;
      const field = failingField(input, `google.protobuf.${typeName}`, Buffer.concat(chunks).toString());
      if (field === undefined) return undefined;
      const text = `${field} is not a valid ${typeName}: ${reason}`;
      return new ConnectError(text, Code.InvalidArgument, undefined, [
        { desc: BadRequestSchema, value: { fieldViolations: [{ field, description: text }] } },
      ]);
    },
  };
}

/** The first top-level field of that message type whose value does not decode on its own. */
function failingField(input: DescMessage, typeName: string, body: string): string | undefined {
  let request: unknown;
  try {
    request = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (typeof request !== "object" || request === null || Array.isArray(request)) return undefined;
  const values = request as Record<string, JsonValue | undefined>;
  for (const field of input.fields) {
    if (field.fieldKind !== "message" || field.message.typeName !== typeName) continue;
    // Proto3 JSON parsers take the lowerCamelCase name and the proto name alike.
    const value = values[field.jsonName] ?? values[field.name];
    if (value === undefined || value === null) continue;
    try {
      fromJson(field.message, value);
    } catch {
      return field.name;
    }
  }
  return undefined;
}
