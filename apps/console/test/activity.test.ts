import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { eventually, held, type Receiver, startCuttableProxy, startReceiver } from "@hookline/testkit";
import type { Page, Request } from "playwright-core";
import { auth, type Hookline, signIn, startHookline } from "./hookline.js";

// The activity page over time: the live view across dropped connections, and the deliveries list
// as pages load, attempts arrive and the tenant changes under a slow answer.

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

/** Lets the page run what is already queued (an answer that arrived) and paint it. */
async function settle(page: Page): Promise<void> {
  await page.evaluate(
    () => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))),
  );
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

test("a stream the api refuses (its token's streams are all taken) is not Live, and its retries back off", async () => {
  // The admin token's whole stream allowance (HOOKLINE_MAX_STREAMS_PER_TOKEN, 20), held open.
  const abort = new AbortController();
  let live = 0;
  const full = held();
  const watches = Array.from({ length: 20 }, async () => {
    const stream = hookline.attemptLog.watchAttempts(
      { tenantId: "crowded" },
      {
        ...auth,
        signal: abort.signal,
        onHeader: (headers) => {
          if (headers.has("hookline-after-attempt-id") && ++live === 20) full.release(undefined);
        },
      },
    );
    for await (const _ of stream);
  });
  const context = await hookline.browser.newContext();
  try {
    await full.promise;
    const page = await context.newPage();
    await signIn(page, hookline.base, "crowded");
    // Over Connect the refusal comes with headers; taking them for an open stream said Live and
    // reset the backoff, so it retried every second for as long as the token was at its cap.
    await page
      .getByTestId("live-status")
      .getByText(/Reconnecting in 2s/)
      .waitFor();
  } finally {
    abort.abort();
    await Promise.allSettled(watches);
    await context.close();
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

test("a slow answer for the previous tenant never replaces the tenant now shown", async () => {
  await subscribe("slowco", "slow.thing");
  await emitEvent("slowco", "slow_1", "slow.thing");
  await subscribe("fastco", "fast.thing");
  await emitEvent("fastco", "fast_1", "fast.thing");
  const context = await hookline.browser.newContext();
  try {
    const page = await context.newPage();
    await signIn(page, hookline.base, "fastco");
    await page.locator("tbody tr", { hasText: "fast_1" }).waitFor();

    // slowco's list call is held until fastco is shown again.
    let held: Request | undefined;
    let release = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    // Answered, or abandoned by the page (which may happen before it is released).
    const settled = new Promise<void>((resolve) => {
      page.on("requestfinished", (r) => r === held && resolve());
      page.on("requestfailed", (r) => r === held && resolve());
    });
    await page.route("**/hookline.v1.AttemptLogService/ListDeliveries", async (route) => {
      if (!held && route.request().postData()?.includes('"slowco"')) {
        held = route.request();
        await released;
      }
      await route.fallback().catch(() => {}); // the page may have given up on it (aborted)
    });
    await page.getByLabel("Tenant").fill("slowco");
    await page.getByRole("button", { name: "Show" }).click();
    await eventually(
      async () => held,
      (request) => request !== undefined,
    );
    await page.getByLabel("Tenant").fill("fastco");
    await page.getByRole("button", { name: "Show" }).click();
    await page.locator("tbody tr", { hasText: "fast_1" }).waitFor();

    release();
    await settled;
    await settle(page);
    assert.equal(
      await page.locator("tbody tr", { hasText: "slow_1" }).count(),
      0,
      "slowco's rows are not shown",
    );
    assert.equal(await page.locator("tbody tr", { hasText: "fast_1" }).count(), 1);
  } finally {
    await context.close();
  }
});

test("after Load more, a new delivery shows below the loaded pages, which stay", async () => {
  const endpointId = await subscribe("paged", "page.turned");
  await Promise.all(
    Array.from({ length: 60 }, (_, i) =>
      emitEvent("paged", `p_${String(i).padStart(2, "0")}`, "page.turned"),
    ),
  );
  const context = await hookline.browser.newContext();
  try {
    const page = await context.newPage();
    await signIn(page, hookline.base, "paged");
    const rows = page.locator("tbody tr");
    await rows.nth(49).waitFor();
    await page.getByRole("button", { name: "Load more" }).click();
    await rows.nth(59).waitFor();
    await page.getByTestId("live-status").getByText("Live").waitFor();

    await emitEvent("paged", "p_new", "page.turned");
    await page.locator('li.attempt-line[data-event="p_new"]').waitFor();
    await rows.filter({ hasText: "p_new" }).waitFor();
    assert.equal(await rows.count(), 61, "every loaded row and the new one");
    assert.equal(await page.getByRole("button", { name: "Load more" }).count(), 0);

    // The nav's Activity is every endpoint again, not the filter an endpoint's link set.
    await page.goto(`${hookline.base}/ui/#/activity/${endpointId}`);
    const filter = page.locator("#filter-endpointId");
    await page.waitForFunction(
      (id) => document.querySelector<HTMLInputElement>("input#filter-endpointId")?.value === id,
      endpointId,
    );
    await page.getByRole("navigation").getByRole("link", { name: "Activity" }).click();
    await page.waitForURL(/#\/activity$/);
    await page.getByTestId("live-status").getByText("Live").waitFor();
    assert.equal(await filter.inputValue(), "");
  } finally {
    await context.close();
  }
});
