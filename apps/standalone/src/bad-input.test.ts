import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { readTestSettings } from "@hookline/testkit";
import { E, j, type Row, TABLE, TOKEN } from "./bad-input-table.js";
import { startTestService, type TestService } from "./test-helpers.js";

const settings = readTestSettings(process.env);

// The rows of bad-input-table.ts, sent raw over Connect's JSON (and binary) protocol.
let svc: TestService;
before(async () => {
  svc = await startTestService(settings, {
    HOOKLINE_API_TOKENS: `tenant:acme:${TOKEN}`,
    HOOKLINE_MAX_EVENT_BYTES: "65536",
  });
});
after(() => svc.close());

/** Sends a unary Connect call (or a server stream's request) and returns its error code or "ok". */
async function call(row: Row): Promise<{ code: string; message: string }> {
  const contentType = row.contentType ?? "application/json";
  const headers: Record<string, string> = { "content-type": contentType };
  if (row.auth !== null) headers.authorization = row.auth ?? `Bearer ${TOKEN}`;
  let body: string | Uint8Array = row.body;
  if (contentType === "application/connect+json") {
    const json = Buffer.from(typeof body === "string" ? body : Buffer.from(body));
    const frame = Buffer.alloc(5 + json.length);
    frame.writeUInt32BE(json.length, 1);
    json.copy(frame, 5);
    body = frame;
  }
  const response = await fetch(`http://${svc.service.address}${row.path}`, { method: "POST", headers, body });
  const bytes = Buffer.from(await response.arrayBuffer());
  if (contentType === "application/connect+json") {
    // The end-of-stream frame (flag 2) carries the error, if any.
    let offset = 0;
    while (offset + 5 <= bytes.length) {
      const flags = bytes[offset] ?? 0;
      const length = bytes.readUInt32BE(offset + 1);
      const payload = bytes.subarray(offset + 5, offset + 5 + length).toString();
      if (flags & 2) {
        const end = JSON.parse(payload) as { error?: { code: string; message: string } };
        return end.error ?? { code: "ok", message: "" };
      }
      offset += 5 + length;
    }
    return { code: "ok", message: "" };
  }
  if (response.ok) return { code: "ok", message: "" };
  const error = JSON.parse(bytes.toString()) as { code: string; message: string };
  return { code: error.code, message: error.message ?? "" };
}

test(`a table of ${TABLE.length} malformed requests gets the right codes, and nothing is half-written`, async (t) => {
  const created = await call({
    name: "",
    path: `${E}CreateEndpoint`,
    body: j({ tenantId: "acme", id: "kept", url: "https://kept.test/" }),
    code: "ok",
  });
  assert.equal(created.code, "ok");
  for (const row of TABLE) {
    await t.test(row.name, async () => {
      const result = await call(row);
      assert.equal(result.code, row.code, `${row.name}: ${result.message}`);
      if (row.names) assert.match(result.message, row.names);
      assert.doesNotMatch(result.message, /select |insert |update |at .*\.js|node_modules/i, "no internals");
      assert.ok(!result.message.includes(TOKEN), "tokens are never echoed");
    });
  }
  // Nothing half-written: the one endpoint created above is all there is; no event was recorded.
  const { endpoints } = await svc.endpoints.listEndpoints(
    { tenantId: "acme" },
    { headers: { authorization: `Bearer ${TOKEN}` } },
  );
  assert.deepEqual(
    endpoints.map((e) => e.id),
    ["kept"],
  );
  const { deliveries } = await svc.log.listDeliveries({}, { headers: { authorization: `Bearer ${TOKEN}` } });
  assert.deepEqual(deliveries, []);
});

test("injection-looking text in every text field is stored and returned verbatim, never interpreted", async () => {
  const auth = { headers: { authorization: `Bearer ${TOKEN}` } };
  const nasty = [
    "'; DROP TABLE hookline.endpoints; --",
    "{{7*7}}",
    "<script>alert(1)</script>",
    "../../etc/passwd",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a log4shell-looking string is the point
    "${jndi:ldap://x/a}",
    "%00%0d%0a",
  ];
  for (const [i, text] of nasty.entries()) {
    const { endpoint } = await svc.endpoints.createEndpoint(
      {
        tenantId: "acme",
        id: `x${i}${text.replace(/[^\x21-\x7e]/g, "")}`,
        url: `https://a.test/${encodeURIComponent(text)}`,
        description: text,
        eventTypes: [text.replace(/\s/g, "_")],
      },
      auth,
    );
    assert.equal(endpoint?.description, text);
    const emitted = await svc.emit.emit(
      {
        tenantId: "acme",
        eventId: `e${i}${text.replace(/\s/g, "_")}`,
        eventType: text.replace(/\s/g, "_"),
        dataJson: JSON.stringify({ text }),
      },
      auth,
    );
    const { event } = await svc.emit.getEvent({ tenantId: "acme", eventId: emitted.eventId }, auth);
    assert.equal(JSON.parse(event?.dataJson ?? "{}").text, text);
  }
  // The service still serves normally, and the tables are intact.
  const { endpoints } = await svc.endpoints.listEndpoints({ tenantId: "acme", pageSize: 100 }, auth);
  assert.equal(endpoints.length, 1 + nasty.length);
});
