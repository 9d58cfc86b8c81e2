import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { createHooklineClient } from "@hookline/client";
import { SessionKind } from "@hookline/contracts";
import { eventually, readTestSettings } from "@hookline/testkit";
import { Webhook } from "standardwebhooks";
import { type RunningHookline, runCli, runCliInProcess, startHookline } from "./test-helpers.js";

const settings = readTestSettings(process.env);
const kind = settings.kind;
let hookline: RunningHookline;
let env: Record<string, string>;
/** The receiver is down (500) until a test brings it back. */
let receiverUp = false;

before(async () => {
  hookline = await startHookline(settings, {
    reply: () => (receiverUp ? { status: 200 } : { status: 500, body: "down for maintenance" }),
    // Two attempts 50 ms apart: a delivery to the receiver while it is down fails in moments.
    env: { HOOKLINE_RETRY_SCHEDULE: "50ms", HOOKLINE_RETRY_JITTER: "0" },
  });
  env = { HOOKLINE_ADDRESS: hookline.address };
});
after(() => hookline?.close());

async function lines(args: string[]): Promise<Record<string, unknown>[]> {
  const result = await runCliInProcess([...args, "--json"], { env });
  assert.equal(result.code, 0, `hookline ${args.join(" ")}:\n${result.stderr}`);
  return result.stdout
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

async function text(args: string[]): Promise<string> {
  const result = await runCliInProcess(args, { env });
  assert.equal(result.code, 0, `hookline ${args.join(" ")}:\n${result.stderr}`);
  return result.stdout;
}

// Bounded: a recover that answered but never exited would otherwise hang the suite.
test(`an outage from the command line: list what failed, show what was sent, recover, resend (${kind})`, {
  timeout: 120_000,
}, async () => {
  const t = ["--tenant", "outage"];
  const [endpoint] = await lines(["endpoints", "create", ...t, "--id", "ep", "--url", hookline.receiver.url]);
  const secret = String(endpoint?.secret);
  for (const [id, type] of [
    ["paid-1", "order.paid"],
    ["paid-2", "order.paid"],
    ["void-1", "order.void"],
  ] as const) {
    await lines(["emit", type, `{"id":"${id}"}`, ...t, "--id", id]);
  }
  const failed = await eventually(
    () => lines(["deliveries", "list", ...t, "--status", "failed"]),
    (rows) => rows.length === 3,
  );
  assert.deepEqual(
    failed.map((d) => d.eventId),
    ["paid-1", "paid-2", "void-1"],
  );
  const paid = await lines(["deliveries", "list", ...t, "--status", "failed", "--event-type", "order.paid"]);
  assert.deepEqual(
    paid.map((d) => d.eventId),
    ["paid-1", "paid-2"],
  );
  assert.equal((await lines(["deliveries", "list", ...t, "--since", "10m"])).length, 3);
  assert.equal(
    (await lines(["deliveries", "list", ...t, "--until", "10m"])).length,
    0,
    "none before 10 minutes ago",
  );
  const table = await runCli(["deliveries", "list", ...t, "--event", "void-1"], { env });
  assert.match(table.stdout, /^DELIVERY\s+CREATED\s+TENANT\s+EVENT\s+ENDPOINT\s+STATUS/);
  assert.match(table.stdout, /\soutage\s+void-1\s+ep\s+failed\s+2\s+-$/m);

  // What was sent, as the receiver's support engineer would need it: the body and, per attempt,
  // headers whose signature verifies with the endpoint's secret.
  const deliveryId = String(failed[0]?.id);
  const shown = await text(["deliveries", "show", deliveryId, ...t]);
  assert.match(shown, /^status\s+failed$/m);
  assert.match(shown, /^event\s+paid-1 \(order\.paid\)$/m);
  const body = /^body\n(.*)$/m.exec(shown)?.[1] ?? "";
  assert.deepEqual(JSON.parse(body).data, { id: "paid-1" });
  const headings = shown.match(/^attempt \d.*$/gm) ?? [];
  assert.equal(headings.length, 2);
  assert.match(headings[0] ?? "", /^attempt 1 at \S+Z: HTTP 500 in \d+ ms$/);
  const headers = Object.fromEntries(
    [...shown.matchAll(/^ {2}(webhook-[a-z]+) +(\S+)$/gm)].map((m) => [m[1], m[2]]),
  );
  assert.equal(headers["webhook-id"], "paid-1");
  assert.doesNotThrow(() => new Webhook(secret).verify(body, headers as Record<string, string>));

  receiverUp = true;
  // Spawned: recover's call has no deadline and its reachability check opens a second call, so
  // only the binary shows that the process also exits once it has printed its answer.
  const recovered = await runCli(["endpoints", "recover", "ep", ...t, "--since", "1h"], { env });
  assert.equal(recovered.code, 0, recovered.stderr);
  assert.equal(recovered.stdout, "requeued 3 failed deliveries of endpoint ep\n");
  await eventually(
    () => lines(["deliveries", "list", ...t, "--status", "delivered"]),
    (rows) => rows.length === 3,
  );
  assert.deepEqual(await lines(["deliveries", "list", ...t, "--status", "failed"]), []);

  // A resend of a delivered delivery: one more request with the same webhook-id, marked manual.
  const before = hookline.receiver.requests.length;
  const resent = await text(["deliveries", "retry", deliveryId, ...t]);
  assert.match(resent, /is pending again: one manual attempt \(attempt 4\) is queued/);
  const [again] = (await hookline.receiver.waitForRequests(before + 1)).slice(before);
  assert.equal(again?.headers["webhook-id"], "paid-1");
  const attempts = await eventually(
    () => lines(["attempts", "list", "--delivery", deliveryId, ...t]),
    (rows) => rows.length === 4,
  );
  assert.equal(attempts[3]?.trigger, "ATTEMPT_TRIGGER_MANUAL");
});

test(`rotate-secret prints the new secret; both sign until the grace ends (${kind})`, async () => {
  receiverUp = true;
  const t = ["--tenant", "rotation"];
  const [created] = await lines(["endpoints", "create", ...t, "--id", "ep", "--url", hookline.receiver.url]);
  const [rotated] = await lines(["endpoints", "rotate-secret", "ep", ...t, "--grace", "1h"]);
  const [oldSecret, newSecret] = [String(created?.secret), String(rotated?.secret)];
  assert.match(newSecret, /^whsec_/);
  assert.notEqual(newSecret, oldSecret);
  const verifiesWith = async (eventId: string) => {
    const before = hookline.receiver.requests.length;
    await lines(["emit", "a.b", "{}", ...t, "--id", eventId]);
    const [request] = (await hookline.receiver.waitForRequests(before + 1)).slice(before);
    assert.ok(request);
    const headers = request.headers as Record<string, string>;
    return (secret: string) => {
      try {
        new Webhook(secret).verify(request.body, headers);
        return true;
      } catch {
        return false;
      }
    };
  };
  const during = await verifiesWith("during-grace");
  assert.deepEqual([during(oldSecret), during(newSecret)], [true, true], "both sign during the grace");

  // --grace 0, with no unit, retires every earlier secret at once.
  const [last] = await lines(["endpoints", "rotate-secret", "ep", ...t, "--grace", "0"]);
  const latest = String(last?.secret);
  const now = await verifiesWith("after-grace");
  assert.deepEqual([now(oldSecret), now(newSecret), now(latest)], [false, false, true]);
});

test(`portal link prints a console URL on the called address, scoped to the tenant (${kind})`, async () => {
  const t = ["--tenant", "portal"];
  await lines(["endpoints", "create", ...t, "--id", "ep", "--url", hookline.receiver.url]);
  const result = await runCli(["portal", "link", ...t, "--endpoint", "ep", "--ttl", "2h"], { env });
  assert.equal(result.code, 0, result.stderr);
  const url = result.stdout.trim();
  assert.ok(url.startsWith(`http://${hookline.address}/ui/#portal=`), url);
  const expires = Date.parse(/^valid until (\S+)$/m.exec(result.stderr)?.[1] ?? "");
  assert.ok(Math.abs(expires - (Date.now() + 2 * 3_600_000)) < 60_000, "expires in two hours");

  const customer = createHooklineClient({ address: hookline.address, token: url.split("#portal=")[1] });
  try {
    const session = await customer.portal.getSession({});
    assert.equal(session.kind, SessionKind.PORTAL);
    assert.deepEqual([session.tenantId, session.endpointId], ["portal", "ep"]);
  } finally {
    customer.close();
  }
  // --json gives the token itself, as the RPC does, beside the URL that carries it.
  const [json] = await lines(["portal", "link", ...t]);
  assert.ok(String(json?.token).startsWith("hlp1."), JSON.stringify(json));
  assert.equal(json?.url, `http://${hookline.address}/ui/#portal=${json?.token}`);
  assert.equal(json?.path, `/ui/#portal=${json?.token}`);

  const tooLong = await runCli(["portal", "link", ...t, "--ttl", "30d"], { env });
  assert.equal(tooLong.code, 1);
  assert.match(tooLong.stderr, /^hookline: ttl must be .*at most 7 days\n$/);
});
