import { type DescField, type DescMessage, fromJson, type JsonValue } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { BadRequestSchema } from "@hookline/contracts";

// protobuf-es names the field when a scalar is malformed, but not when a well-known type or an
// enum is: `"since": "yesterday"` reads "cannot decode message google.protobuf.Timestamp from
// JSON: invalid RFC 3339 string", and `"status": "DELIVERED"` "cannot decode enum
// hookline.v1.DeliveryStatus from JSON: "DELIVERED"", which leave the caller to guess the field.
const UNNAMED = /^cannot decode (?:message|enum) ([\w.]+) from JSON: (.*)$/s;

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
  if (!input.fields.some((field) => typeNameOf(field) !== undefined)) return undefined;
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
      const field = failingField(input, typeName, Buffer.concat(chunks).toString());
      if (field === undefined) return undefined;
      const shortName = typeName.slice(typeName.lastIndexOf(".") + 1);
      const choices =
        field.fieldKind === "enum" ? ` (one of ${field.enum.values.map((v) => v.name).join(", ")})` : "";
      const text = `${field.name} is not a valid ${shortName}: ${reason}${choices}`;
      return new ConnectError(text, Code.InvalidArgument, undefined, [
        { desc: BadRequestSchema, value: { fieldViolations: [{ field: field.name, description: text }] } },
      ]);
    },
  };
}

/** The type a field's JSON may fail to decode as without protobuf-es naming the field. */
function typeNameOf(field: DescField): string | undefined {
  if (field.fieldKind === "enum") return field.enum.typeName;
  if (field.fieldKind === "message" && field.message.typeName.startsWith("google.protobuf."))
    return field.message.typeName;
  return undefined;
}

/** The first top-level field of that type whose value does not decode on its own. */
function failingField(input: DescMessage, typeName: string, body: string): DescField | undefined {
  let request: unknown;
  try {
    request = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (typeof request !== "object" || request === null || Array.isArray(request)) return undefined;
  const values = request as Record<string, JsonValue | undefined>;
  for (const field of input.fields) {
    if (typeNameOf(field) !== typeName) continue;
    // Proto3 JSON parsers take the lowerCamelCase name and the proto name alike.
    const value = values[field.jsonName] ?? values[field.name];
    if (value === undefined || value === null) continue;
    try {
      fromJson(input, { [field.jsonName]: value });
    } catch {
      return field;
    }
  }
  return undefined;
}
