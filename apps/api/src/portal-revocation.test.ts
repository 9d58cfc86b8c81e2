import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { PortalService } from "@hookline/contracts";
import { readTestSettings } from "@hookline/testkit";
import { startTestApi, type TestApi } from "./test-helpers.js";

const settings = readTestSettings(process.env);
const PORTAL_KEY = "portal-revocation-key-0123456789abcdef";
const ADMIN = "revocation-admin-token-0123456789";
const LEAKED = "revocation-acme-leaked-0123456789";
const REPLACEMENT = "revocation-acme-replacement-01234";
const OPS = "revocation-ops-token-0123456789ab";

// The same portal key before and after: the operator revokes one token, not every link.
let before_: TestApi;
let after_: TestApi;
before(async () => {
  [before_, after_] = await Promise.all([
    startTestApi(settings, {
      HOOKLINE_API_TOKENS: `${ADMIN},tenant:acme:${LEAKED},${OPS}`,
      HOOKLINE_PORTAL_KEY: PORTAL_KEY,
    }),
    startTestApi(settings, {
      // OPS, an admin token before, is now limited to another tenant.
      HOOKLINE_API_TOKENS: `${ADMIN},tenant:acme:${REPLACEMENT},tenant:beta:${OPS}`,
      HOOKLINE_PORTAL_KEY: PORTAL_KEY,
    }),
  ]);
});
after(() => Promise.all([before_?.close(), after_?.close()]));

function portal(api: TestApi) {
  return createClient(PortalService, createGrpcTransport({ baseUrl: `http://${api.address}` }));
}

function as(token: string) {
  return { headers: { authorization: `Bearer ${token}` } };
}

async function sessionTenant(api: TestApi, link: string): Promise<string> {
  try {
    return (await portal(api).getSession({}, as(link))).tenantId;
  } catch (error) {
    const e = ConnectError.from(error);
    return `${Code[e.code]}: ${e.rawMessage}`;
  }
}

test("a link stops working once the API token that minted it is revoked or re-scoped; others' links do not", async () => {
  const ttl = { seconds: 3600n };
  const byLeaked = (await portal(before_).createPortalLink({ tenantId: "acme", ttl }, as(LEAKED))).token;
  const byAdmin = (await portal(before_).createPortalLink({ tenantId: "acme", ttl }, as(ADMIN))).token;
  const byOps = (await portal(before_).createPortalLink({ tenantId: "acme", ttl }, as(OPS))).token;
  assert.ok(!byLeaked.includes(LEAKED), "the link carries no token");
  assert.deepEqual(
    [await sessionTenant(before_, byLeaked), await sessionTenant(before_, byAdmin)],
    ["acme", "acme"],
  );

  // With the leaked token taken out of HOOKLINE_API_TOKENS, its links go with it; so do those
  // of a token now limited to another tenant, which could no longer mint them.
  const revoked =
    "Unauthenticated: this portal link was issued with an API token that is no longer accepted; ask for a new one";
  assert.deepEqual(
    [
      await sessionTenant(after_, byLeaked),
      await sessionTenant(after_, byOps),
      await sessionTenant(after_, byAdmin),
    ],
    [revoked, revoked, "acme"],
  );
  const byReplacement = (await portal(after_).createPortalLink({ tenantId: "acme", ttl }, as(REPLACEMENT)))
    .token;
  assert.equal(await sessionTenant(after_, byReplacement), "acme");
});
