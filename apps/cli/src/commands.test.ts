import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { eventually, readTestSettings } from "@hookline/testkit";
import { type RunningHookline, runCli, runCliInProcess, startHookline } from "./test-helpers.js";

const settings = readTestSettings(process.env);

const kind = settings.kind;
let hookline: RunningHookline;
let env: Record<string, string>;

before(async () => {
  hookline = await startHookline(settings);
  env = { HOOKLINE_ADDRESS: hookline.address };
});
after(() => hookline?.close());

/** Runs the CLI, expects exit 0 and returns stdout parsed as JSON lines. */
async function json(args: string[], input?: string): Promise<Record<string, unknown>[]> {
  const result = await runCliInProcess([...args, "--json"], { env, ...(input !== undefined && { input }) });
  assert.equal(result.code, 0, `hookline ${args.join(" ")}:\n${result.stderr}`);
  return result.stdout
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** Like json(), for a command that prints exactly one object. */
async function one(args: string[], input?: string): Promise<Record<string, unknown>> {
  const [only, ...rest] = await json(args, input);
  assert.ok(only !== undefined && rest.length === 0, `one object from hookline ${args.join(" ")}`);
  return only;
}

test(`text output shows other people's control characters as escapes, never raw (${kind})`, async () => {
  const t = ["--tenant", "escapes"];
  // A colour, a window title and a carriage return that would overwrite the line.
  const description = "plain \u001b[31mred\u001b]0;pwned\u0007 \rfake\u009b2J\nnot a row";
  await one([
    "endpoints",
    "create",
    ...t,
    "--id",
    "esc",
    "--url",
    "https://example.com/h",
    "--description",
    description,
  ]);
  const listed = await runCli(["endpoints", "list", ...t], { env });
  assert.equal(listed.code, 0, listed.stderr);
  for (const raw of ["\u001b", "\u0007", "\r", "\u009b"]) assert.ok(!listed.stdout.includes(raw));
  assert.ok(
    listed.stdout.includes(String.raw`plain \u001b[31mred\u001b]0;pwned\u0007 \u000dfake\u009b2J not a row`),
  );
  assert.equal(listed.stdout.trimEnd().split("\n").length, 2, "the header and one row");
  // JSON keeps the exact text: the escape means the same string there.
  assert.equal((await one(["endpoints", "get", "esc", ...t])).description, description);
});

test(`endpoints create, get, list, update and delete; only create and get show the secret (${kind})`, async () => {
  const t = ["--tenant", "acme"];
  const url = hookline.receiver.url;
  const created = await one([
    "endpoints",
    "create",
    ...t,
    "--id",
    "billing",
    "--url",
    url,
    "--event-type",
    "a.b",
  ]);
  assert.equal(created.id, "billing");
  assert.deepEqual(created.eventTypes, ["a.b"]);
  assert.match(String(created.secret), /^whsec_/);
  const got = await one(["endpoints", "get", "billing", ...t]);
  assert.equal(got.secret, created.secret);

  await json(["endpoints", "create", ...t, "--url", "https://example.com/other"]);
  const listed = await json(["endpoints", "list", ...t]);
  assert.deepEqual(
    listed.map((e) => e.url),
    [url, "https://example.com/other"],
  );
  assert.ok(listed.every((e) => !("secret" in e)));
  const table = await runCli(["endpoints", "list", ...t], { env });
  assert.match(table.stdout, /^ID\s+STATUS\s+EVENT TYPES\s+URL/);
  assert.match(table.stdout, /billing\s+enabled\s+a\.b/);
  assert.doesNotMatch(table.stdout, /whsec_/);

  const updated = await one(["endpoints", "update", "billing", ...t, "--disable", "--all-event-types"]);
  assert.equal(updated.status, "ENDPOINT_STATUS_DISABLED");
  assert.deepEqual(updated.eventTypes, []);
  assert.ok(!("secret" in updated));
  const shown = await runCli(["endpoints", "get", "billing", ...t], { env });
  assert.match(shown.stdout, /^status\s+disabled\b/m);
  assert.match(shown.stdout, /^secret\s+whsec_/m);

  const deleted = await runCli(["endpoints", "delete", "billing", ...t], { env });
  assert.equal(deleted.stdout, "deleted endpoint billing\n");
  const gone = await runCli(["endpoints", "get", "billing", ...t], { env });
  assert.equal(gone.code, 1);
  assert.match(gone.stderr, /^hookline: .*billing.*not found/);
});

test(`emit takes data from the argument or stdin; event show lists the deliveries (${kind})`, async () => {
  const t = ["--tenant", "shop"];
  await json(["endpoints", "create", ...t, "--id", "ep", "--url", hookline.receiver.url]);

  const fromArg = await one(["emit", "order.paid", '{"order":1}', ...t, "--id", "o1"]);
  assert.equal(fromArg.eventId, "o1");
  assert.equal((fromArg.deliveryIds as string[]).length, 1);
  assert.equal(fromArg.duplicate, false);
  const fromStdin = await one(["emit", "order.paid", ...t, "--id", "o2"], '{"order": 2}\n');
  assert.equal((fromStdin.deliveryIds as string[]).length, 1);
  // Spawned: the binary itself reads a piped stdin.
  const again = await runCli(["emit", "order.paid", "-", ...t, "--id", "o2"], { env, input: '{"order": 2}' });
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stdout, /^event o2 was already recorded \(nothing new written\): 1 delivery$/m);

  const shown = await one(["event", "show", "o2", ...t]);
  const event = shown.event as Record<string, unknown>;
  assert.equal(event.dataJson, '{"order": 2}');
  assert.equal(event.eventType, "order.paid");
  const deliveries = shown.deliveries as Record<string, unknown>[];
  assert.deepEqual(
    deliveries.map((d) => d.id),
    fromStdin.deliveryIds,
  );
  // The receiver got both events with the data given on the command line and on stdin.
  const bodies = await eventually(
    async () => hookline.receiver.requests.map((r) => JSON.parse(r.body) as { data: unknown; type: string }),
    (found) => found.filter((b) => b.type === "order.paid").length === 2,
  );
  const data = bodies.filter((b) => b.type === "order.paid").map((b) => JSON.stringify(b.data));
  assert.deepEqual(data.sort(), ['{"order":1}', '{"order":2}']);
  const readable = await runCli(["event", "show", "o1", ...t], { env });
  assert.match(readable.stdout, /^data\s+\{"order":1\}$/m);
  assert.match(readable.stdout, /^DELIVERY\s+ENDPOINT\s+STATUS\s+ATTEMPTS/m);
  assert.match(readable.stdout, /\sep\s+(pending|delivered|failed)\s/);
});

test(`attempts list filters by tenant, endpoint and event (${kind})`, async () => {
  const t = ["--tenant", "logs"];
  for (const id of ["one", "two"]) {
    await json(["endpoints", "create", ...t, "--id", id, "--url", hookline.receiver.url]);
  }
  for (const id of ["x1", "x2"]) await json(["emit", "thing.done", "{}", ...t, "--id", id]);
  const all = await eventually(
    () => json(["attempts", "list", ...t]),
    (rows) => rows.length === 4,
  );
  assert.deepEqual(
    all.map((a) => a.tenantId),
    ["logs", "logs", "logs", "logs"],
  );
  const filtered = await json(["attempts", "list", ...t, "--endpoint", "two", "--event", "x2"]);
  assert.deepEqual(
    filtered.map((a) => [a.endpointId, a.eventId]),
    [["two", "x2"]],
  );
  const limited = await runCli(["attempts", "list", ...t, "--limit", "3"], { env });
  assert.equal(limited.stdout.trim().split("\n").length, 4, "header and three rows");
  assert.match(limited.stderr, /showing the first 3/);
});

test("a server's INVALID_ARGUMENT and NOT_FOUND messages are printed as they are", async () => {
  const bad = await runCli(["emit", "a.b", "{not json", "--tenant", "acme"], { env });
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /^hookline: data_json .+\n$/);
  const missing = await runCli(["event", "show", "nope", "--tenant", "acme"], { env });
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /^hookline: .*nope.*not found\n$/);
  const badUrl = await runCli(["endpoints", "create", "--tenant", "acme", "--url", "ftp://x"], { env });
  assert.equal(badUrl.code, 1);
  assert.equal(badUrl.stderr, "hookline: url must use http or https\n");
});
