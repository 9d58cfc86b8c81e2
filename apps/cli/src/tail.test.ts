import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { eventually, readTestSettings, spawnHookline } from "@hookline/testkit";
import { type RunningHookline, runCliInProcess, startCli, startHookline } from "./test-helpers.js";

const settings = readTestSettings(process.env);

const kind = settings.kind;
let hookline: RunningHookline;
let env: Record<string, string>;

before(async () => {
  hookline = await startHookline(settings);
  env = { HOOKLINE_ADDRESS: hookline.address };
  // --after 0 means "only new attempts": seed one so each test's "just before my first" is an id.
  await tenantWithFirstAttempt("seed");
});
after(() => hookline?.close());

async function ok(args: string[]): Promise<string> {
  const result = await runCliInProcess(args, { env });
  assert.equal(result.code, 0, `hookline ${args.join(" ")}:\n${result.stderr}`);
  return result.stdout;
}

/** A tenant with an endpoint and one event whose attempt is recorded; returns that attempt's id. */
async function tenantWithFirstAttempt(tenant: string): Promise<bigint> {
  await ok(["endpoints", "create", "--tenant", tenant, "--id", "ep", "--url", hookline.receiver.url]);
  await ok(["emit", "thing.done", "{}", "--tenant", tenant, "--id", "e1"]);
  const lines = await eventually(
    async () => (await ok(["attempts", "list", "--tenant", tenant, "--json"])).trim().split("\n"),
    (found) => found.length === 1 && found[0] !== "",
  );
  return BigInt((JSON.parse(lines[0] ?? "{}") as { id: string }).id);
}

const parse = (lines: string[]) => lines.map((line) => JSON.parse(line) as Record<string, unknown>);

test(`tail --json streams live attempts of its tenant and exits on SIGINT (${kind})`, async () => {
  const first = await tenantWithFirstAttempt("tailed");
  await tenantWithFirstAttempt("other");
  // Starting just before the first attempt: its line proves the stream is open before the emits.
  const tail = startCli(["tail", "--json", "--tenant", "tailed", "--after", String(first - 1n)], env);
  try {
    await tail.waitForLines(1);
    await ok(["emit", "thing.done", "{}", "--tenant", "other", "--id", "e2"]);
    await ok(["emit", "thing.done", "{}", "--tenant", "tailed", "--id", "e2"]);
    await ok(["emit", "thing.done", "{}", "--tenant", "tailed", "--id", "e3"]);
    const attempts = parse(await tail.waitForLines(3));
    // e2 and e3 are delivered side by side: their attempts may be recorded in either order.
    const byEvent = (a: Record<string, unknown>, b: Record<string, unknown>) =>
      String(a.eventId).localeCompare(String(b.eventId));
    assert.equal(attempts[0]?.eventId, "e1");
    assert.deepEqual(
      [...attempts].sort(byEvent).map((a) => [a.tenantId, a.eventId, a.endpointId, a.attemptNumber]),
      [
        ["tailed", "e1", "ep", 1],
        ["tailed", "e2", "ep", 1],
        ["tailed", "e3", "ep", 1],
      ],
    );
    assert.equal(attempts[0]?.id, String(first));
    assert.ok(attempts.every((a) => typeof a.startedAt === "string" && "responseStatus" in a));
  } finally {
    assert.equal(await tail.stop("SIGINT"), 0, tail.stderr);
  }
  assert.equal(tail.stderr, "");
});

test(`tail filters by endpoint and event, and writes JSON lines when stdout is not a terminal (${kind})`, async () => {
  const first = await tenantWithFirstAttempt("filtered");
  await ok(["endpoints", "create", "--tenant", "filtered", "--id", "ep2", "--url", hookline.receiver.url]);
  const args = [
    "tail",
    "--tenant",
    "filtered",
    "--endpoint",
    "ep2",
    "--event",
    "e9",
    "--after",
    String(first),
  ];
  const tail = startCli(args, env);
  try {
    await ok(["emit", "thing.done", "{}", "--tenant", "filtered", "--id", "e8"]);
    await ok(["emit", "thing.done", "{}", "--tenant", "filtered", "--id", "e9"]);
    const [attempt] = parse(await tail.waitForLines(1));
    assert.deepEqual([attempt?.endpointId, attempt?.eventId], ["ep2", "e9"]);
    // e8's two attempts and e9's attempt to ep were recorded before, and none of them came.
    await eventually(
      async () =>
        (await ok(["attempts", "list", "--tenant", "filtered", "--json"])).trim().split("\n").length,
      (count) => count === 5,
    );
    assert.equal(tail.stdout.trim().split("\n").length, 1);
  } finally {
    assert.equal(await tail.stop("SIGTERM"), 0, tail.stderr);
  }
});

test(`tail resumes after the service restarts, without a gap or a duplicate (${kind})`, async () => {
  const first = await tenantWithFirstAttempt("restarted");
  const tail = startCli(["tail", "--json", "--tenant", "restarted", "--after", String(first - 1n)], env);
  try {
    await tail.waitForLines(1);
    assert.equal(await hookline.service.stop(), 0);
    hookline.service = await spawnHookline("standalone", {
      ...hookline.backend.env,
      HOOKLINE_API_ADDR: hookline.address,
      HOOKLINE_QUEUE_POLL_INTERVAL: "20ms",
    });
    await ok(["emit", "thing.done", "{}", "--tenant", "restarted", "--id", "e2"]);
    await ok(["emit", "thing.done", "{}", "--tenant", "restarted", "--id", "e3"]);
    const attempts = parse(await tail.waitForLines(3));
    // e2 and e3 are delivered side by side: their attempts may be recorded in either order.
    assert.deepEqual(attempts.map((a) => a.eventId).sort(), ["e1", "e2", "e3"]);
    const listed = parse(
      (await ok(["attempts", "list", "--tenant", "restarted", "--json"])).trim().split("\n"),
    );
    assert.deepEqual(
      attempts.map((a) => a.id),
      listed.map((a) => a.id),
    );
    assert.match(tail.stderr, /reconnecting after attempt \d+/);
  } finally {
    assert.equal(await tail.stop("SIGINT"), 0, tail.stderr);
  }
});
