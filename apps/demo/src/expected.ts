import { DeliveryStatus } from "@hookline/contracts";
import { TIMEOUT_MS } from "./backend.js";
import type { ReceiverTally } from "./receivers.js";
import { distinctWebhookIds, responseText, statusName } from "./report.js";
import { EVENT_ID, type ServiceOutcome } from "./scenario.js";

const TIMEOUT = `no response within ${TIMEOUT_MS} ms`;

/** What the reference design does with each endpoint: the responses of its attempts, in order. */
const EXPECTED: Record<string, { responses: string[]; final: DeliveryStatus; disabled: boolean }> = {
  ep_a: { responses: ["200 ok"], final: DeliveryStatus.DELIVERED, disabled: false },
  ep_b: { responses: ["503 busy", "503 busy", "200 ok"], final: DeliveryStatus.DELIVERED, disabled: false },
  ep_c: { responses: [TIMEOUT, TIMEOUT, TIMEOUT, TIMEOUT], final: DeliveryStatus.FAILED, disabled: false },
  ep_d: { responses: ["410 gone"], final: DeliveryStatus.CANCELLED, disabled: true },
};

/** Every way the outcome differs from the expected one, each in a sentence; empty when it matches. */
export function checkOutcome(outcome: ServiceOutcome, tallies: readonly ReceiverTally[]): string[] {
  const problems: string[] = [];
  const expect = (ok: boolean, problem: string) => ok || problems.push(problem);
  const endpoints = Object.keys(EXPECTED);
  expect(
    sameList(
      outcome.deliveries.map((d) => d.endpointId),
      endpoints,
    ),
    `deliveries went to [${list(outcome.deliveries.map((d) => d.endpointId))}], expected [${list(endpoints)}]`,
  );
  for (const [endpoint, want] of Object.entries(EXPECTED)) {
    const attempts = outcome.attempts.filter((a) => a.endpointId === endpoint);
    const got = attempts.map(responseText);
    expect(
      sameList(got, want.responses),
      `${endpoint}: attempts answered [${list(got)}], expected [${list(want.responses)}]`,
    );
    const numbers = attempts.map((a) => a.attemptNumber);
    const wantNumbers = want.responses.map((_, i) => i + 1);
    expect(
      sameList(numbers, wantNumbers),
      `${endpoint}: attempts numbered [${list(numbers)}], expected [${list(wantNumbers)}]`,
    );
    const after = attempts.map((a) => statusName(a.deliveryStatus));
    const wantAfter = want.responses.map((_, i) =>
      statusName(i === want.responses.length - 1 ? want.final : DeliveryStatus.PENDING),
    );
    expect(
      sameList(after, wantAfter),
      `${endpoint}: statuses after each attempt [${list(after)}], expected [${list(wantAfter)}]`,
    );
    const delivery = outcome.deliveries.find((d) => d.endpointId === endpoint);
    if (delivery) {
      expect(
        delivery.status === want.final,
        `${endpoint}: delivery ${statusName(delivery.status)}, expected ${statusName(want.final)}`,
      );
      expect(
        delivery.attemptCount === want.responses.length,
        `${endpoint}: attempt count ${delivery.attemptCount}, expected ${want.responses.length}`,
      );
    }
    const disabled = outcome.disabled.find((e) => e.id === endpoint);
    expect(!!disabled === want.disabled, `${endpoint}: ${want.disabled ? "not disabled" : "disabled"}`);
    if (disabled) expect(disabled.disabledReason !== "", `${endpoint}: disabled with no reason recorded`);
    const tally = tallies.find((t) => t.endpoint === endpoint);
    expect(
      tally?.requests === want.responses.length,
      `${endpoint}: receiver saw ${tally?.requests ?? 0} requests, expected ${want.responses.length}`,
    );
    expect(
      tally !== undefined && tally.verified === tally.requests,
      `${endpoint}: ${tally?.verified ?? 0} of ${tally?.requests ?? 0} signatures verify`,
    );
  }
  const ids = distinctWebhookIds(tallies);
  expect(
    sameList(ids, [EVENT_ID]),
    `webhook-id values [${list(ids)}], expected only the event id ${EVENT_ID}`,
  );
  return problems;
}

function sameList(got: readonly unknown[], want: readonly unknown[]): boolean {
  return got.length === want.length && got.every((value, i) => value === want[i]);
}

function list(values: readonly unknown[]): string {
  return values.join(", ");
}
