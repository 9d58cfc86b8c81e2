import assert from "node:assert/strict";
import { test } from "node:test";
import type { Attempt } from "@hookline/contracts";
import { DeliveryStatus } from "@hookline/contracts";
import { readTestSettings, type startReceiver } from "@hookline/testkit";
import { attemptsOf, finalDeliveries, sharedTestService } from "./test-helpers.js";

const settings = readTestSettings(process.env);

// Two retries 700 ms apart (±20% jitter): long enough to tell a Retry-After from the schedule.
const WAIT = 700;
const LATENESS = 300; // how late a retry may start on either queue backend
const shared = sharedTestService(settings, { HOOKLINE_RETRY_SCHEDULE: "700ms,700ms" });

/** Time from the end of each attempt to the start of the next. */
function gaps(attempts: Attempt[]): number[] {
  const times = attempts.map((a) => ({
    start: Number(a.startedAt?.seconds ?? 0n) * 1000 + Math.floor((a.startedAt?.nanos ?? 0) / 1e6),
    duration: a.durationMs,
  }));
  return times.slice(1).map((t, i) => t.start - ((times[i]?.start ?? 0) + (times[i]?.duration ?? 0)));
}

async function run(tenantId: string, reply: Parameters<typeof startReceiver>[0]) {
  const r = await shared.receiver(reply);
  await shared.svc.endpoints.createEndpoint({ tenantId, id: "ep", url: r.url });
  await shared.svc.emit.emit({ tenantId, eventId: "e", eventType: "x", dataJson: "{}" });
  const [delivery] = await finalDeliveries(shared.svc, tenantId, "e");
  return { delivery, attempts: await attemptsOf(shared.svc, tenantId, "e"), receiver: r };
}

test("retries run on the schedule, within the jitter, and not late", async () => {
  const { delivery, attempts } = await run("schedule", () => ({ status: 500 }));
  assert.equal(delivery?.status, DeliveryStatus.FAILED);
  assert.equal(attempts.length, 3);
  for (const gap of gaps(attempts)) {
    assert.ok(gap >= WAIT * 0.8 - 5 && gap <= WAIT * 1.2 + LATENESS, `gap ${gap} ms`);
  }
});

test("a Retry-After on 503 is honoured when it lies between the scheduled wait and twice it", async () => {
  const { delivery, attempts } = await run("retry-after", (_req, n) =>
    n === 1 ? { status: 503, headers: { "retry-after": "1" } } : { status: 200 },
  );
  assert.equal(delivery?.status, DeliveryStatus.DELIVERED);
  const [gap] = gaps(attempts);
  // Never earlier than asked; spread up to the jitter (20%) later.
  assert.ok(gap !== undefined && gap >= 1000 - 5 && gap <= 1000 * 1.2 + LATENESS, `gap ${gap} ms`);
});

test("an absurd Retry-After on 429 is clamped to twice the scheduled wait", async () => {
  const { delivery, attempts } = await run("absurd", (_req, n) =>
    n === 1 ? { status: 429, headers: { "retry-after": "86400" } } : { status: 200 },
  );
  assert.equal(delivery?.status, DeliveryStatus.DELIVERED);
  const [gap] = gaps(attempts);
  assert.ok(gap !== undefined && gap >= 2 * WAIT - 5 && gap <= 2 * WAIT * 1.2 + LATENESS, `gap ${gap} ms`);
});
