import assert from "node:assert/strict";
import { test } from "node:test";
import { issuerOf, PortalTokenError, signPortalToken, verifyPortalToken } from "./portal-token.js";

const KEY = Buffer.from("k".repeat(32));
const NOW = new Date("2026-11-30T12:00:00Z");
const grant = {
  tenantId: "acme",
  endpointId: "ep1",
  issuer: issuerOf(KEY, { token: "minting-api-token" }),
  expiresAt: new Date("2026-11-30T13:00:00Z"),
};

test("a signed grant verifies to itself until it expires", () => {
  const token = signPortalToken(KEY, grant);
  assert.deepEqual(verifyPortalToken(KEY, token, NOW), grant);
  assert.throws(() => verifyPortalToken(KEY, token, grant.expiresAt), /expired/);
});

test("any other spelling of the signature, another key, or edited claims are refused", () => {
  const token = signPortalToken(KEY, grant);
  const last = token.at(-1) ?? "";
  // The last base64url character carries two unused bits: flipping them keeps the same bytes.
  const sameBytes = token.slice(0, -1) + String.fromCharCode(last.charCodeAt(0) ^ 1);
  const edited = token.replace(
    /^hlp1\.[^.]+/,
    `hlp1.${Buffer.from('{"t":"globex","e":"","x":4000000000}').toString("base64url")}`,
  );
  for (const bad of [sameBytes, edited, `${token}=`, "hlp1.", "hlp1.e30.", token.replace(/\.[^.]+$/, "")]) {
    assert.throws(() => verifyPortalToken(KEY, bad, NOW), PortalTokenError, bad);
  }
  assert.throws(() => verifyPortalToken(Buffer.from("o".repeat(32)), token, NOW), /not valid/);
});

test("a link names its minting token and scope by a digest that is not the token, and differs under another key", () => {
  const issuer = issuerOf(KEY, { token: "minting-api-token" });
  assert.notEqual(issuer, issuerOf(KEY, { token: "another-api-token" }));
  assert.notEqual(issuer, issuerOf(KEY, { token: "minting-api-token", tenantId: "acme" }));
  assert.notEqual(issuer, issuerOf(Buffer.from("o".repeat(32)), { token: "minting-api-token" }));
  const claims = Buffer.from(signPortalToken(KEY, grant).split(".")[1] ?? "", "base64url").toString();
  assert.ok(claims.includes(issuer) && !claims.includes("minting-api-token"), claims);
});
