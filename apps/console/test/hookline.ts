import { type Client, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { loadConfig } from "@hookline/config";
import { AttemptLogService, EmitService, EndpointService, PortalService } from "@hookline/contracts";
import { createLogger } from "@hookline/runtime";
import { type Service, startService } from "@hookline/standalone";
import { createTestBackend, readTestSettings, type TestBackend } from "@hookline/testkit";
import { type Browser, chromium, type Page } from "playwright-core";

// What every console test file starts: a real Hookline (api + worker in this process, on this
// run's backend), clients for it, and Debian's headless Chromium. One per file: starting is the
// slow part, so a file's tests share it and keep apart by tenant.

export const ADMIN_TOKEN = "admin-token-for-the-console-test";
/** acme's tenant-scoped token, configured as tenant:acme:<this>. */
export const ACME_TOKEN = "acme-token-for-the-console-test";
export const auth = { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } };

// The flags that work on this machine as root with no network (see the README).
const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export interface Hookline {
  service: Service;
  /** http://host:port of the api, which serves the console under /ui/. */
  base: string;
  browser: Browser;
  endpoints: Client<typeof EndpointService>;
  emit: Client<typeof EmitService>;
  portal: Client<typeof PortalService>;
  attemptLog: Client<typeof AttemptLogService>;
  close(): Promise<void>;
}

export async function startHookline(): Promise<Hookline> {
  const backend: TestBackend = await createTestBackend(readTestSettings(process.env));
  let service: Service | undefined;
  let browser: Browser | undefined;
  const close = async () => {
    await browser?.close();
    await service?.close();
    await backend.dispose();
  };
  try {
    const config = loadConfig({
      HOOKLINE_API_ADDR: "127.0.0.1:0",
      HOOKLINE_API_TOKENS: `${ADMIN_TOKEN},tenant:acme:${ACME_TOKEN}`,
      HOOKLINE_QUEUE_POLL_INTERVAL: "20ms",
      HOOKLINE_ALLOWED_CIDRS: "127.0.0.0/8",
      HOOKLINE_RETRY_SCHEDULE: "1s",
      HOOKLINE_RETRY_JITTER: "0",
      ...backend.env,
    });
    service = await startService(
      config,
      createLogger("test", () => {}),
    );
    browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS });
    const base = `http://${service.address}`;
    const transport = createGrpcTransport({ baseUrl: base });
    return {
      service,
      base,
      browser,
      endpoints: createClient(EndpointService, transport),
      emit: createClient(EmitService, transport),
      portal: createClient(PortalService, transport),
      attemptLog: createClient(AttemptLogService, transport),
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** Signs in with the admin token at `base` (the api or a proxy to it) and shows `tenant`. */
export async function signIn(page: Page, base: string, tenant: string): Promise<void> {
  await page.goto(`${base}/ui/`);
  await page.getByLabel("API token").fill(ADMIN_TOKEN);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByLabel("Tenant").fill(tenant);
  await page.getByRole("button", { name: "Show" }).click();
}
