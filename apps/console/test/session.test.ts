import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { startCuttableProxy } from "@hookline/testkit";
import type { BrowserContext, Page } from "playwright-core";
import { ACME_TOKEN, ADMIN_TOKEN, auth, type Hookline, signIn, startHookline } from "./hookline.js";

// How the console comes to its credentials and lets go of them: sign-in, portal links opened in
// any tab, addresses it cannot read, and credentials that stop working mid-session.

let hookline: Hookline;
let context: BrowserContext;
let page: Page;

before(async () => {
  hookline = await startHookline();
});

after(async () => {
  await hookline?.close();
});

// A fresh tab (its own sessionStorage) per test.
async function freshTab(): Promise<Page> {
  await context?.close();
  context = await hookline.browser.newContext();
  page = await context.newPage();
  return page;
}

const refused = () => page.getByRole("heading", { name: "This link does not work" });

test("a portal link opened in a tab already showing the console switches to it", async () => {
  await freshTab();
  await signIn(page, hookline.base, "acme");
  await page.getByRole("heading", { name: "Live attempts" }).waitFor();
  const link = await hookline.portal.createPortalLink({ tenantId: "globex" }, auth);
  // Same document, new fragment: what clicking or pasting the link does in this tab.
  await page.goto(`${hookline.base}${link.path}`);
  await page.getByTestId("tenant").getByText("globex").waitFor();
  assert.ok(!page.url().includes(link.token), "the token leaves the address bar");
  await page.reload();
  await page.getByTestId("tenant").getByText("globex").waitFor();
});

test("an address with a broken % escape shows a page saying what is wrong, not a blank one", async () => {
  await freshTab();
  await page.goto(`${hookline.base}/ui/#portal=hlp1.%E0%A4%A`);
  await refused().waitFor();
  await page.getByText("could not be read").waitFor();
  assert.ok(!page.url().includes("hlp1."), "the damaged token leaves the address bar too");

  await freshTab();
  await signIn(page, hookline.base, "acme");
  await page.getByRole("heading", { name: "Live attempts" }).waitFor();
  await page.goto(`${hookline.base}/ui/#/delivery/%E0%A4%A`);
  await page.reload();
  await page.getByRole("heading", { name: "Live attempts" }).waitFor();
});

test("an endpoint link cannot reach the send form, and ends when its endpoint is deleted", async () => {
  const { endpoint } = await hookline.endpoints.createEndpoint(
    { tenantId: "acme", url: "http://127.0.0.1:9/hook", eventTypes: ["never"] },
    auth,
  );
  const id = endpoint?.id ?? "";
  const link = await hookline.portal.createPortalLink({ tenantId: "acme", endpointId: id }, auth);
  await freshTab();
  await page.goto(`${hookline.base}${link.path}`);
  await page.getByTestId("tenant").getByText(id).waitFor();
  await page.goto(`${hookline.base}/ui/#/send`);
  await page.waitForURL(/#\/activity$/);
  assert.equal(await page.getByRole("heading", { name: "Send a test event" }).count(), 0);

  await hookline.endpoints.deleteEndpoint({ tenantId: "acme", id }, auth);
  // The next call finds out (the live stream may first): the page says the link is over.
  await page.goto(`${hookline.base}/ui/#/endpoints`);
  await refused().waitFor();
});

test("sign-in takes a whole tenant:<id>:<token> entry, and refuses a token a browser cannot send", async () => {
  await freshTab();
  await page.goto(`${hookline.base}/ui/`);
  await page.getByLabel("API token").fill("tökén-€-1234567890");
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("alert").getByText("a character a browser cannot send").waitFor();

  await page.getByLabel("API token").fill(`tenant:acme:${ACME_TOKEN}`);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByTestId("tenant").getByText("acme").waitFor();
});

test("a sign-in while the api is unreachable says so, and Try again keeps the token", async () => {
  const proxy = await startCuttableProxy(hookline.service.address);
  try {
    await freshTab();
    await page.goto(`http://${proxy.address}/ui/`);
    await page.getByLabel("API token").waitFor();
    proxy.cut();
    await page.getByLabel("API token").fill(ADMIN_TOKEN);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("alert").getByText("Hookline is unreachable").waitFor();
    proxy.restore();
    await page.getByRole("button", { name: "Try again" }).click();
    await page.getByLabel("Tenant").waitFor();
  } finally {
    await proxy.close();
  }
});
