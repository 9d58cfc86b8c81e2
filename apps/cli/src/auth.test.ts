import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { readTestSettings } from "@hookline/testkit";
import { type RunningHookline, runCli, startHookline } from "./test-helpers.js";

const settings = readTestSettings(process.env);
const kind = settings.kind;
const ADMIN = "admin-token-0123456789";
const ACME = "acme-token-0123456789";
let hookline: RunningHookline;
let address: string;

before(async () => {
  hookline = await startHookline(settings, {
    env: { HOOKLINE_API_TOKENS: `${ADMIN},tenant:acme:${ACME}` },
  });
  address = hookline.address;
});
after(() => hookline?.close());

const list = ["endpoints", "list", "--tenant", "acme"];

test(`a missing token says what to set (${kind})`, async () => {
  for (const args of [list, ["tail", "--tenant", "acme"]]) {
    const result = await runCli(args, { env: { HOOKLINE_ADDRESS: address } });
    assert.equal(result.code, 1, args.join(" "));
    assert.match(
      result.stderr,
      /^hookline: Hookline at \S+ \(HOOKLINE_ADDRESS\) needs a token: set HOOKLINE_TOKEN or pass --token/,
    );
  }
});

test(`a refused token is named by where it came from, never printed (${kind})`, async () => {
  const wrong = "wrong-token-0123456789";
  const fromEnv = await runCli(list, { env: { HOOKLINE_ADDRESS: address, HOOKLINE_TOKEN: wrong } });
  assert.equal(fromEnv.code, 1);
  assert.match(fromEnv.stderr, /refused the token from HOOKLINE_TOKEN: invalid token\n$/);
  const fromFlag = await runCli([...list, "--token", wrong], {
    env: { HOOKLINE_ADDRESS: address, HOOKLINE_TOKEN: ADMIN },
  });
  assert.equal(fromFlag.code, 1);
  assert.match(fromFlag.stderr, /refused the token from --token: invalid token\n$/);
  // A tenant's token asking for another tenant: allowed in, not to that.
  const other = await runCli(["endpoints", "list", "--tenant", "globex"], {
    env: { HOOKLINE_ADDRESS: address, HOOKLINE_TOKEN: ACME },
  });
  assert.equal(other.code, 1);
  assert.match(other.stderr, /not allowed with the token from HOOKLINE_TOKEN: /);
  for (const result of [fromEnv, fromFlag, other]) {
    assert.ok(!result.stderr.includes(wrong) && !result.stderr.includes(ACME));
  }
});

test(`a token that cannot be one is a usage error naming its source, not a garbled call (${kind})`, async () => {
  // A space inside reached the api as "missing bearer token"; a non-Latin-1 character failed
  // with a message about ByteStrings.
  for (const token of ["admin token-0123456789", "admin-tokén-0123456789", "admin\u0007token"]) {
    const result = await runCli(list, { env: { HOOKLINE_ADDRESS: address, HOOKLINE_TOKEN: token } });
    assert.equal(result.code, 2, JSON.stringify(token));
    assert.match(result.stderr, /^hookline: HOOKLINE_TOKEN holds whitespace, a control character/);
    assert.ok(!result.stderr.includes("token-0123456789"), "the token is not printed");
  }
  // Surrounding whitespace, as from a file read into the variable, is not part of the token.
  const padded = await runCli(list, { env: { HOOKLINE_ADDRESS: address, HOOKLINE_TOKEN: ` ${ADMIN}\n` } });
  assert.equal(padded.code, 0, padded.stderr);
  const scoped = await runCli(list, { env: { HOOKLINE_ADDRESS: address, HOOKLINE_TOKEN: ACME } });
  assert.equal(scoped.code, 0, scoped.stderr);
});
