import assert from "node:assert/strict";
import { mkdir } from "node:fs/promises";
import { after, before, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { durationFromMs, timestampDate } from "@bufbuild/protobuf/wkt";
import type { Client } from "@connectrpc/connect";
import type { AttemptLogService, EmitService, EndpointService, PortalService } from "@hookline/contracts";
import type { Service } from "@hookline/standalone";
import { eventually, type Receiver, startCuttableProxy, startReceiver } from "@hookline/testkit";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { ADMIN_TOKEN, auth, type Hookline, startHookline } from "./hookline.js";

// Drives the built console in Debian's headless Chromium against a real Hookline (api + worker in
// this process, on this run's backend), the way an operator and a customer would use it.

const SCREENSHOTS = new URL("../screenshots/", import.meta.url);

let hookline: Hookline;
let service: Service;
let receiver: Receiver;
let browser: Browser;
let operator: BrowserContext;
let page: Page;
let base: string;
let endpoints: Client<typeof EndpointService>;
let emit: Client<typeof EmitService>;
let portal: Client<typeof PortalService>;
let attemptLog: Client<typeof AttemptLogService>;
const state = { endpointId: "", deliveryId: "", secret: "" };

before(async () => {
  hookline = await startHookline();
  ({ service, base, browser, endpoints, emit, portal, attemptLog } = hookline);
  // The first request fails, so the delivery has a retry the live view must show as it happens.
  receiver = await startReceiver((_request, n) =>
    n === 1 ? { status: 500, body: "not ready yet" } : { status: 200, body: "thanks" },
  );
  operator = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  page = await operator.newPage();
  await mkdir(SCREENSHOTS, { recursive: true });
});

after(async () => {
  await receiver?.close();
  await hookline?.close();
});

test("an operator signs in with a token and creates an endpoint; its secret shows only on reveal", async () => {
  await page.goto(`${base}/ui/`);
  await page.getByLabel("API token").fill(ADMIN_TOKEN);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByLabel("Tenant").fill("acme");
  await page.getByRole("button", { name: "Show" }).click();
  await page.getByRole("navigation").getByRole("link", { name: "Endpoints" }).click();
  await page.getByRole("button", { name: "Add endpoint" }).click();
  await page.getByLabel("URL").fill(receiver.url);
  await page.getByLabel("Event types").fill("invoice.paid");
  await page.getByRole("button", { name: "Create endpoint" }).click();
  await page.locator("li.endpoint", { hasText: receiver.url }).waitFor();

  const [created] = (await endpoints.listEndpoints({ tenantId: "acme" }, auth)).endpoints;
  assert.ok(created, "the endpoint made in the browser is in the store");
  assert.equal(created.url, receiver.url);
  assert.deepEqual(created.eventTypes, ["invoice.paid"]);
  state.endpointId = created.id;
  const full = await endpoints.getEndpoint({ tenantId: "acme", id: created.id }, auth);
  state.secret = full.endpoint?.secret ?? "";
  assert.match(state.secret, /^whsec_/);

  assert.equal(await page.getByText(state.secret).count(), 0, "the list never shows the secret");
  await page.getByRole("button", { name: "Reveal secret" }).click();
  await assert.doesNotReject(page.getByTestId("secret").getByText(state.secret).waitFor());
  await page.getByRole("button", { name: "Hide" }).click();
  assert.equal(await page.getByText(state.secret).count(), 0);
});

test("an event emitted through the API shows its attempts live in the activity view", async () => {
  await page.getByRole("navigation").getByRole("link", { name: "Activity" }).click();
  await page.getByTestId("live-status").getByText("Live").waitFor();
  const emitted = await emit.emit(
    { tenantId: "acme", eventId: "inv_1001", eventType: "invoice.paid", dataJson: '{"amount":4200}' },
    auth,
  );
  state.deliveryId = emitted.deliveryIds[0] ?? "";
  // Attempt 1 got a 500; attempt 2 runs a second later, while the page is watching.
  const second = page.locator('li.attempt-line[data-event="inv_1001"]', { hasText: "attempt 2" });
  await second.waitFor({ timeout: 20_000 });
  assert.match((await second.textContent()) ?? "", /200/);
  await page.locator("table tbody tr", { hasText: "inv_1001" }).getByText("delivered").waitFor();
  await page.screenshot({ path: new URL("live-activity.png", SCREENSHOTS).pathname });
});

test("the delivery detail shows the payload and signed headers, never the secret, and retries", async () => {
  await page
    .locator('li.attempt-line[data-event="inv_1001"]', { hasText: "attempt 2" })
    .getByRole("link")
    .click();
  await page.getByTestId("payload").getByText('"amount": 4200').waitFor();
  await page.locator('[data-attempt="2"]').getByText("Request sent").click();
  const headers = (await page.locator('[data-attempt="2"]').getByTestId("headers").textContent()) ?? "";
  assert.match(headers, /webhook-signature\s*v1,/);
  assert.match(headers, /webhook-id\s*inv_1001/);
  // What the page shows is what the receiver got.
  const sent = receiver.requests[1]?.headers["webhook-signature"];
  assert.ok(sent && headers.includes(String(sent)), "the shown signature is the one sent");
  assert.equal(await page.getByText(state.secret).count(), 0, "the detail never shows the secret");
  assert.ok(!(await page.content()).includes(state.secret.slice("whsec_".length)));

  await page.getByRole("button", { name: "Retry now" }).click();
  const manual = page.locator('[data-attempt="3"]');
  await manual.getByText("manual retry").waitFor({ timeout: 20_000 });
  await manual.getByText("200").first().waitFor();
  assert.equal(receiver.requests.length, 3, "the retry reached the receiver");
  await page.screenshot({ path: new URL("delivery-detail.png", SCREENSHOTS).pathname, fullPage: true });
});

test("after a dropped connection the live view resumes from the last attempt it showed", async () => {
  const proxy = await startCuttableProxy(service.address);
  const watcher = await browser.newContext();
  try {
    const view = await watcher.newPage();
    await view.goto(`http://${proxy.address}/ui/`);
    await view.getByLabel("API token").fill(ADMIN_TOKEN);
    await view.getByRole("button", { name: "Sign in" }).click();
    await view.getByLabel("Tenant").fill("acme");
    await view.getByRole("button", { name: "Show" }).click();
    await view.getByTestId("live-status").getByText("Live").waitFor();
    const attemptsOf = async (eventId: string) =>
      (await attemptLog.listAttempts({ tenantId: "acme", eventId }, auth)).attempts;

    await emit.emit(
      { tenantId: "acme", eventId: "inv_2001", eventType: "invoice.paid", dataJson: "{}" },
      auth,
    );
    await view.locator('li.attempt-line[data-event="inv_2001"]').waitFor();
    const [shown] = await attemptsOf("inv_2001");
    assert.ok(shown);

    proxy.cut();
    await view.getByTestId("live-status").getByText(`resuming after attempt ${shown.id}`).waitFor();
    // Recorded while the page is disconnected: it must arrive by replay, not live.
    await emit.emit(
      { tenantId: "acme", eventId: "inv_2002", eventType: "invoice.paid", dataJson: "{}" },
      auth,
    );
    await eventually(
      () => attemptsOf("inv_2002"),
      (attempts) => attempts.length === 1,
    );
    proxy.restore();
    await view.locator('li.attempt-line[data-event="inv_2002"]').waitFor({ timeout: 20_000 });
    await view.getByTestId("live-status").getByText("Live").waitFor();
    assert.equal(
      await view.locator('li.attempt-line[data-event="inv_2001"]').count(),
      1,
      "nothing shown twice",
    );
  } finally {
    await watcher.close();
    await proxy.close();
  }
});

test("a portal link for one tenant sees that tenant only", async () => {
  const other = await endpoints.createEndpoint(
    { tenantId: "globex", url: `${receiver.url}?globex`, eventTypes: ["order.shipped"] },
    auth,
  );
  const link = await portal.createPortalLink({ tenantId: "globex" }, auth);
  assert.equal(link.path, `/ui/#portal=${link.token}`);
  const customer = await browser.newContext({ viewport: { width: 390, height: 800 } });
  try {
    const view = await customer.newPage();
    await view.goto(`${base}${link.path}`);
    await view.getByTestId("tenant").getByText("globex").waitFor();
    assert.ok(!view.url().includes(link.token), "the token leaves the address bar");
    await view.getByRole("navigation").getByRole("link", { name: "Endpoints" }).click();
    await view.locator("li.endpoint", { hasText: other.endpoint?.id ?? "?" }).waitFor();
    assert.equal(await view.getByText(state.endpointId).count(), 0, "acme's endpoint is not listed");
    // Fits a phone: nothing wider than the screen.
    assert.ok(await view.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth));

    // acme's delivery, opened by address, is not found for globex.
    await view.goto(`${base}/ui/#/delivery/${state.deliveryId}`);
    await view
      .getByRole("alert")
      .getByText(/not found/i)
      .waitFor();
    assert.equal(await view.getByText("4200").count(), 0);

    // Asking the API directly with the link's token for acme is refused.
    const status = await view.evaluate(
      async ({ token }) => {
        const response = await fetch("/hookline.v1.EndpointService/ListEndpoints", {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
          body: JSON.stringify({ tenantId: "acme" }),
        });
        return { http: response.status, body: await response.text() };
      },
      { token: link.token },
    );
    assert.equal(status.http, 403);
    assert.match(status.body, /permission_denied/);
  } finally {
    await customer.close();
  }
});

test("an expired or altered portal link is refused with a page saying so", async () => {
  const short = await portal.createPortalLink({ tenantId: "globex", ttl: durationFromMs(1000) }, auth);
  const good = await portal.createPortalLink({ tenantId: "globex" }, auth);
  const customer = await browser.newContext();
  try {
    const view = await customer.newPage();
    // One character of the signature changed.
    const at = good.token.length - 10;
    const altered = `${good.token.slice(0, at)}${good.token[at] === "A" ? "B" : "A"}${good.token.slice(at + 1)}`;
    await view.goto(`${base}/ui/#portal=${altered}`);
    await view.getByRole("heading", { name: "This link does not work" }).waitFor();
    await view.getByText(/not valid/).waitFor();

    // Expiry is a time, not an event: wait until it has passed.
    assert.ok(short.expiresAt);
    const expiresAt = timestampDate(short.expiresAt).getTime();
    await sleep(Math.max(0, expiresAt - Date.now()) + 50);
    // Opened in the same tab, as a customer clicking a second link would.
    await view.goto(`${base}/ui/#portal=${short.token}`);
    await view.getByRole("heading", { name: "This link does not work" }).waitFor();
    await view.getByText(/expired/).waitFor();
    assert.equal(await view.getByText("globex").count(), 0);
  } finally {
    await customer.close();
  }
});

/** The operator's tab, switched to `tenant`'s endpoints. */
async function showEndpoints(tenant: string): Promise<void> {
  await page.getByLabel("Tenant").fill(tenant);
  await page.getByRole("button", { name: "Show" }).click();
  await page.getByRole("navigation").getByRole("link", { name: "Endpoints" }).click();
  await page.getByRole("heading", { name: "Endpoints" }).waitFor();
}

async function storedTypes(tenantId: string, id: string): Promise<string[]> {
  return (await hookline.endpoints.getEndpoint({ tenantId, id }, auth)).endpoint?.eventTypes ?? [];
}

test("event types holding commas survive an edit of other fields, and are edited one per line", async () => {
  const { endpoint } = await hookline.endpoints.createEndpoint(
    { tenantId: "commas", url: "http://127.0.0.1:9/hook", eventTypes: ["order,created", "order.paid"] },
    auth,
  );
  const id = endpoint?.id ?? "";
  await showEndpoints("commas");
  const row = page.locator(`li.endpoint[data-endpoint="${id}"]`);
  await row.waitFor();
  // Each type shown on its own, so the comma inside one reads as part of it.
  assert.deepEqual(await row.locator("dd.types code").allTextContents(), ["order,created", "order.paid"]);

  await row.getByRole("button", { name: "Edit" }).click();
  await row.getByLabel("Description").fill("billing");
  await row.getByRole("button", { name: "Save" }).click();
  await row.getByText("billing").waitFor();
  assert.deepEqual(await storedTypes("commas", id), ["order,created", "order.paid"]);

  await row.getByRole("button", { name: "Edit" }).click();
  await row.getByLabel("Event types").fill("order,created\norder.refunded");
  await row.getByRole("button", { name: "Save" }).click();
  await row.locator("dd.types code", { hasText: "order.refunded" }).waitFor();
  assert.deepEqual(await storedTypes("commas", id), ["order,created", "order.refunded"]);

  // A line holding a space is one type, which the api refuses: not two types saved in its place.
  await row.getByRole("button", { name: "Edit" }).click();
  await row.getByLabel("Event types").fill("order created");
  await row.getByRole("button", { name: "Save" }).click();
  await row.getByText(/must not contain spaces/).waitFor();
  assert.deepEqual(await storedTypes("commas", id), ["order,created", "order.refunded"]);
});

test("an endpoint created after Load more shows below the loaded pages, which stay", async () => {
  await Promise.all(
    Array.from({ length: 55 }, (_, i) =>
      hookline.endpoints.createEndpoint(
        { tenantId: "many", id: `ep-${String(i).padStart(2, "0")}`, url: "http://127.0.0.1:9/hook" },
        auth,
      ),
    ),
  );
  await showEndpoints("many");
  const rows = page.locator("li.endpoint");
  await rows.nth(49).waitFor();
  await page.getByRole("button", { name: "Load more" }).click();
  await rows.nth(54).waitFor();

  await page.getByRole("button", { name: "Add endpoint" }).click();
  await page.getByLabel("URL").fill("http://127.0.0.1:9/new");
  await page.getByRole("button", { name: "Create endpoint" }).click();
  await rows.filter({ hasText: "http://127.0.0.1:9/new" }).waitFor();
  assert.equal(await rows.count(), 56, "every loaded endpoint and the new one");
});
