import { after, before, test } from "node:test";
import { eventually, type Receiver, startCuttableProxy, startReceiver } from "@hookline/testkit";
import { auth, type Hookline, signIn, startHookline } from "./hookline.js";

// The activity page over time: the live view across dropped connections.

let hookline: Hookline;
let receiver: Receiver;

before(async () => {
  hookline = await startHookline();
  receiver = await startReceiver(() => ({ status: 200, body: "ok" }));
});

after(async () => {
  await receiver?.close();
  await hookline?.close();
});

async function subscribe(tenantId: string, eventType: string): Promise<string> {
  const { endpoint } = await hookline.endpoints.createEndpoint(
    { tenantId, url: receiver.url, eventTypes: [eventType] },
    auth,
  );
  return endpoint?.id ?? "";
}

async function emitEvent(tenantId: string, eventId: string, eventType: string): Promise<void> {
  await hookline.emit.emit({ tenantId, eventId, eventType, dataJson: "{}" }, auth);
}

test("the live view says Live only once the stream is open, and again after a reconnect", async () => {
  const proxy = await startCuttableProxy(hookline.service.address);
  const context = await hookline.browser.newContext();
  try {
    const page = await context.newPage();
    const status = page.getByTestId("live-status");
    // Hold the stream's request: until the api answers, nothing is live yet.
    let open = () => {};
    const opened = new Promise<void>((resolve) => {
      open = resolve;
    });
    await page.route("**/hookline.v1.AttemptLogService/WatchAttempts", async (route) => {
      await opened;
      await route.fallback();
    });
    await signIn(page, `http://${proxy.address}`, "quiet");
    await status.getByText("Connecting…").waitFor();
    open();
    await status.getByText("Live").waitFor();
    await page.unrouteAll({ behavior: "wait" });

    // A stream with nothing to say after reconnecting is live, not connecting.
    proxy.cut();
    await status.getByText("Connection lost").waitFor();
    proxy.restore();
    await status.getByText("Live").waitFor({ timeout: 20_000 });
  } finally {
    await context.close();
    await proxy.close();
  }
});

test("attempts recorded while disconnected, before any attempt was shown, arrive on reconnect", async () => {
  await subscribe("gap", "gap.happened");
  // The store holds an attempt already (as any Hookline in use does): with none at all the stream
  // can only start "from now on", which a reconnect cannot name (after_attempt_id 0).
  await emitEvent("gap", "gap_0", "gap.happened");
  await eventually(
    async () =>
      (await hookline.attemptLog.listAttempts({ tenantId: "gap", eventId: "gap_0" }, auth)).attempts,
    (attempts) => attempts.length === 1,
  );
  const proxy = await startCuttableProxy(hookline.service.address);
  const context = await hookline.browser.newContext();
  try {
    const page = await context.newPage();
    await signIn(page, `http://${proxy.address}`, "gap");
    await page.getByTestId("live-status").getByText("Live").waitFor();

    proxy.cut();
    await page.getByTestId("live-status").getByText("Connection lost").waitFor();
    await emitEvent("gap", "gap_1", "gap.happened");
    await eventually(
      async () =>
        (await hookline.attemptLog.listAttempts({ tenantId: "gap", eventId: "gap_1" }, auth)).attempts,
      (attempts) => attempts.length === 1,
    );
    proxy.restore();
    await page.locator('li.attempt-line[data-event="gap_1"]').waitFor({ timeout: 20_000 });
  } finally {
    await context.close();
    await proxy.close();
  }
});
