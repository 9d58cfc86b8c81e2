import { type DescField, type DescMessage, fromJson, type JsonValue } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { BadRequestSchema } from "@hookline/contracts";

// protobuf-es names the field when a scalar is malformed, but not when a well-known type or an
// enum is: `"since": "yesterday"` reads "cannot decode message google.protobuf.Timestamp from
// JSON: invalid RFC 3339 string", and `"status": "DELIVERED"` "cannot decode enum
// hookline.v1.DeliveryStatus from JSON: "DELIVERED"", which leave the caller to guess the field.
const UNNAMED = /^cannot decode (?:message|enum) ([\w.]+) from JSON: (.*)$/s;

// protobuf-es does name the field of a malformed scalar, but by its full name and with no
// BadRequest detail: "cannot decode field hookline.v1.CreateEndpointRequest.tenant_id from JSON:
// expected string, got Array(1)". An unknown key reads "cannot decode message
// hookline.v1.CreateEndpointRequest from JSON: key "bogus" is unknown".
const NAMED = /^cannot decode field ([\w.]+)\.(\w+) from JSON: (.*)$/s;
const UNKNOWN_KEY = /^cannot decode message ([\w.]+) from JSON: key "(.*)" is unknown$/s;

/**
 * The INVALID_ARGUMENT, named as every other refused field is (its proto name first, and a
 * BadRequest detail), for a JSON decoding error of the request's own fields that protobuf-es
 * phrased its own way; undefined for any other message.
 */
export function namedJsonError(input: DescMessage, message: string): ConnectError | undefined {
  const named = NAMED.exec(message);
  if (named?.[1] === input.typeName && named[2] !== undefined) {
    return fieldError(named[2], `${named[2]} is not valid: ${named[3] ?? ""}`);
  }
  const unknown = UNKNOWN_KEY.exec(message);
  if (unknown?.[1] === input.typeName && unknown[2] !== undefined) {
    return fieldError(unknown[2], `${unknown[2]} is not a field of ${input.name}`);
  }
  return undefined;
}

function fieldError(field: string, text: string): ConnectError {
  return new ConnectError(text, Code.InvalidArgument, undefined, [
    { desc: BadRequestSchema, value: { fieldViolations: [{ field, description: text }] } },
  ]);
}

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
      return fieldError(field.name, `${field.name} is not a valid ${shortName}: ${reason}${choices}`);
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
