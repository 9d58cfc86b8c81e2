// Malformed requests over Connect's JSON (and binary) protocol, the way a buggy or hostile client
// sends them: the types are wrong, bytes are not UTF-8, fields are huge, enums unknown, tokens
// nonsense. Each row says which code it must get; bad-input.test.ts sends them.

/** The tenant-scoped token the service under test is started with. */
export const TOKEN = "bad-input-token-0123456789";

export type Row = {
  name: string;
  path: string;
  body: string | Uint8Array;
  code: string;
  /** What the message must mention (the field or the limit). */
  names?: RegExp;
  auth?: string | null;
  contentType?: string;
};

export const E = "/hookline.v1.EndpointService/";
const M = "/hookline.v1.EmitService/";
const L = "/hookline.v1.AttemptLogService/";
export const j = (value: unknown) => JSON.stringify(value);
// A protobuf message whose field 1 (tenant_id) holds bytes that are not UTF-8.
const badUtf8 = new Uint8Array([0x0a, 0x02, 0xff, 0xfe]);

export const TABLE: Row[] = [
  {
    name: "tenant id as a number",
    path: `${E}ListEndpoints`,
    body: j({ tenantId: 5 }),
    code: "invalid_argument",
  },
  {
    name: "page size as text",
    path: `${E}ListEndpoints`,
    body: j({ tenantId: "acme", pageSize: "ten" }),
    code: "invalid_argument",
  },
  {
    name: "event types as a string",
    path: `${E}CreateEndpoint`,
    body: j({ tenantId: "acme", url: "https://a.test", eventTypes: "x" }),
    code: "invalid_argument",
  },
  {
    name: "status as an unknown name",
    path: `${E}UpdateEndpoint`,
    body: j({ tenantId: "acme", id: "kept", status: "BOGUS" }),
    code: "invalid_argument",
  },
  {
    name: "status as an unknown number",
    path: `${E}UpdateEndpoint`,
    body: j({ tenantId: "acme", id: "kept", status: 42 }),
    code: "invalid_argument",
    names: /status/,
  },
  {
    name: "delivery status unknown",
    path: `${L}ListDeliveries`,
    body: j({ status: 17 }),
    code: "invalid_argument",
    names: /status/,
  },
  {
    name: "data_json as an object",
    path: `${M}Emit`,
    body: j({ tenantId: "acme", eventType: "x", dataJson: { a: 1 } }),
    code: "invalid_argument",
  },
  { name: "body is not JSON", path: `${M}Emit`, body: "{tenantId:", code: "invalid_argument" },
  { name: "body is a JSON array", path: `${M}Emit`, body: "[]", code: "invalid_argument" },
  {
    name: "unknown field",
    path: `${M}Emit`,
    body: j({ tenantId: "acme", eventType: "x", dataJson: "1", admin: true }),
    code: "invalid_argument",
  },
  // A stray byte is refused, not read as U+FFFD (which made this an unknown tenant).
  {
    name: "invalid UTF-8 in a JSON body",
    path: `${E}ListEndpoints`,
    body: new Uint8Array([
      0x7b, 0x22, 0x74, 0x65, 0x6e, 0x61, 0x6e, 0x74, 0x49, 0x64, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d,
    ]),
    code: "invalid_argument",
    names: /not valid UTF-8/,
  },
  // A protobuf string that is not UTF-8 cannot be decoded: INTERNAL, as grpc-go answers it too.
  {
    name: "invalid UTF-8 in a protobuf string",
    path: `${E}ListEndpoints`,
    body: badUtf8,
    code: "invalid_argument",
    names: /utf-8/i,
    contentType: "application/proto",
  },
  {
    name: "negative page size",
    path: `${L}ListAttempts`,
    body: j({ pageSize: -3 }),
    code: "invalid_argument",
    names: /page_size/,
  },
  {
    name: "page size beyond int32",
    path: `${L}ListAttempts`,
    body: j({ pageSize: 3_000_000_000 }),
    code: "invalid_argument",
  },
  {
    name: "negative resume cursor",
    path: `${L}WatchAttempts`,
    body: j({ afterAttemptId: "-5" }),
    code: "invalid_argument",
    names: /after_attempt_id/,
    contentType: "application/connect+json",
  },
  {
    name: "huge description",
    path: `${E}CreateEndpoint`,
    body: j({ tenantId: "acme", url: "https://a.test", description: "d".repeat(5000) }),
    code: "invalid_argument",
    names: /description/,
  },
  {
    name: "huge url",
    path: `${E}CreateEndpoint`,
    body: j({ tenantId: "acme", url: `https://a.test/${"p".repeat(3000)}` }),
    code: "invalid_argument",
    names: /url/,
  },
  {
    name: "too many event types",
    path: `${E}CreateEndpoint`,
    body: j({
      tenantId: "acme",
      url: "https://a.test",
      eventTypes: Array.from({ length: 101 }, (_, i) => `t${i}`),
    }),
    code: "invalid_argument",
    names: /event_types/,
  },
  {
    name: "data_json over the limit",
    path: `${M}Emit`,
    body: j({ tenantId: "acme", eventType: "x", dataJson: `"${"x".repeat(70_000)}"` }),
    code: "invalid_argument",
    names: /data_json/,
  },
  {
    name: "message over the transport limit",
    path: `${M}Emit`,
    // A JSON body may be six times the event limit (65,536 here) plus 64 KiB: escapes lengthen it.
    body: j({ tenantId: "acme", eventType: "x", dataJson: `"${"x".repeat(500_000)}"` }),
    code: "resource_exhausted",
  },
  {
    name: "literal private url",
    path: `${E}CreateEndpoint`,
    body: j({ tenantId: "acme", url: "http://10.0.0.1/" }),
    code: "invalid_argument",
    names: /url/,
  },
  {
    name: "decimal private url",
    path: `${E}CreateEndpoint`,
    body: j({ tenantId: "acme", url: "http://167772161/" }),
    code: "invalid_argument",
    names: /url/,
  },
  {
    name: "metadata address url",
    path: `${E}CreateEndpoint`,
    body: j({ tenantId: "acme", url: "http://169.254.169.254/latest" }),
    code: "invalid_argument",
    names: /url/,
  },
  {
    name: "javascript url",
    path: `${E}CreateEndpoint`,
    body: j({ tenantId: "acme", url: "javascript:alert(1)" }),
    code: "invalid_argument",
    names: /url/,
  },
  {
    name: "rotation with a negative grace",
    path: `${E}RotateEndpointSecret`,
    body: j({ tenantId: "acme", id: "kept", gracePeriod: "-5s" }),
    code: "invalid_argument",
  },
  {
    name: "rotation with a 90-day grace",
    path: `${E}RotateEndpointSecret`,
    body: j({ tenantId: "acme", id: "kept", gracePeriod: `${90 * 86400}s` }),
    code: "invalid_argument",
    names: /grace_period/,
  },
  {
    name: "rotation to a bad secret",
    path: `${E}RotateEndpointSecret`,
    body: j({ tenantId: "acme", id: "kept", secret: "whsec_short" }),
    code: "invalid_argument",
    names: /secret/,
  },
  {
    name: "recovery with no since",
    path: `${E}RecoverEndpoint`,
    body: j({ tenantId: "acme", id: "kept" }),
    code: "invalid_argument",
    names: /since/,
  },
  {
    name: "recovery with a malformed since",
    path: `${E}RecoverEndpoint`,
    body: j({ tenantId: "acme", id: "kept", since: "yesterday" }),
    code: "invalid_argument",
  },
  {
    name: "retry of an unknown delivery",
    path: `${L}RetryDelivery`,
    body: j({ tenantId: "acme", deliveryId: "dl_nope" }),
    code: "not_found",
  },
  {
    name: "retry without a delivery id",
    path: `${L}RetryDelivery`,
    body: j({ tenantId: "acme" }),
    code: "invalid_argument",
    names: /delivery_id/,
  },
  {
    name: "another tenant's data",
    path: `${E}ListEndpoints`,
    body: j({ tenantId: "globex" }),
    code: "permission_denied",
  },
  {
    name: "another tenant's stream",
    path: `${L}WatchAttempts`,
    body: j({ tenantId: "globex" }),
    code: "permission_denied",
    contentType: "application/connect+json",
  },
  { name: "no token", path: `${E}ListEndpoints`, body: j({}), code: "unauthenticated", auth: null },
  {
    name: "Basic credentials",
    path: `${E}ListEndpoints`,
    body: j({}),
    code: "unauthenticated",
    auth: "Basic YWRtaW46YWRtaW4=",
  },
  {
    name: "Bearer with no token",
    path: `${E}ListEndpoints`,
    body: j({}),
    code: "unauthenticated",
    auth: "Bearer",
  },
  {
    name: "two tokens",
    path: `${E}ListEndpoints`,
    body: j({}),
    code: "unauthenticated",
    auth: `Bearer ${TOKEN} ${TOKEN}`,
  },
  {
    name: "a token one character off",
    path: `${E}ListEndpoints`,
    body: j({}),
    code: "unauthenticated",
    auth: `Bearer ${TOKEN.slice(0, -1)}x`,
  },
  {
    name: "a 10 KB token",
    path: `${E}ListEndpoints`,
    body: j({}),
    code: "unauthenticated",
    auth: `Bearer ${"t".repeat(10_000)}`,
  },
  {
    name: "an injection as token",
    path: `${E}ListEndpoints`,
    body: j({}),
    code: "unauthenticated",
    auth: "Bearer ' OR '1'='1",
  },
];
