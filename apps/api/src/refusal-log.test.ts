import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { Code, ConnectError } from "@connectrpc/connect";
import type { Logger } from "@hookline/runtime";
import { readTestSettings } from "@hookline/testkit";
import { logRefusals } from "./refusal-log.js";
import { expectStatus, startTestApi, type TestApi } from "./test-helpers.js";

const settings = readTestSettings(process.env);
const TOKEN = "refusal-log-0123456789abcdef";
const GUESS = "guessed-token-9876543210";

let api: TestApi;
before(async () => {
  api = await startTestApi(settings, { HOOKLINE_API_TOKENS: `tenant:acme:${TOKEN}` });
});
after(() => api.close());

/** A logger that keeps its lines. */
function recordingLog() {
  const lines: { message: string; fields: Record<string, unknown> }[] = [];
  const write = (message: string, fields: Record<string, unknown> = {}) => lines.push({ message, fields });
  const log: Logger = { info: write, warn: write, error: write };
  return { log, lines };
}

const loggedLines = () => api.logLines.map((line) => JSON.parse(line) as Record<string, unknown>);

test("a call refused from its headers is logged with its method, reason and address", async () => {
  // The test's gRPC client sends no token.
  await expectStatus(api.call("ListEndpoints", { tenant_id: "acme" }), 16);
  const refused = loggedLines().find((l) => l.message === "call refused");
  assert.ok(refused, "the refusal is in the api's log");
  assert.equal(refused.method, "hookline.v1.EndpointService/ListEndpoints");
  assert.equal(refused.code, "unauthenticated");
  assert.match(String(refused.reason), /bearer token/);
  assert.equal(refused.peer, "127.0.0.1");
});

test("a guessed token refused in the same spell adds no line of its own, and never appears in the log", async () => {
  const before = api.logLines.length;
  const response = await fetch(`http://${api.address}/hookline.v1.EndpointService/ListEndpoints`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${GUESS}` },
    body: JSON.stringify({ tenantId: "acme" }),
  });
  assert.equal(response.status, 401);
  // The first test's refusal opened a window: this one is counted when it ends, not logged alone.
  assert.ok(!api.logLines.slice(before).some((line) => line.includes("call refused")));
  assert.ok(!api.logLines.some((line) => line.includes(GUESS) || line.includes(TOKEN)));
});

test("a flood of refusals is one line, then one count per window, not a line each", () => {
  const { log, lines } = recordingLog();
  const windowEnds: (() => void)[] = [];
  const listen = logRefusals(log, (fn) => windowEnds.push(fn));
  const refuse = (i: number) =>
    listen(`svc/M${i}`, new ConnectError("invalid token", Code.Unauthenticated), "10.0.0.9");
  const endWindow = () => windowEnds.shift()?.();

  for (let i = 0; i < 50; i++) refuse(i);
  assert.deepEqual(
    lines.map((l) => l.message),
    ["call refused"],
  );
  endWindow();
  assert.deepEqual(lines.at(-1), {
    message: "more calls refused",
    fields: {
      count: 49,
      window_s: 60,
      last: { method: "svc/M49", code: "unauthenticated", reason: "invalid token", peer: "10.0.0.9" },
    },
  });

  refuse(50); // still within the next window: counted
  endWindow();
  assert.equal(lines.at(-1)?.fields.count, 1);
  endWindow(); // a window with none: the spell is over
  assert.equal(lines.length, 3);

  refuse(51);
  assert.deepEqual(lines.at(-1)?.message, "call refused");
  assert.equal(lines.at(-1)?.fields.method, "svc/M51");
});
