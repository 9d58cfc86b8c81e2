import assert from "node:assert/strict";
import { test } from "node:test";
import { Webhook, WebhookVerificationError } from "standardwebhooks";
import { generateSecret, InvalidSecretError, parseSecret, signPayload, webhookHeaders } from "./index.js";

const nowSeconds = (): number => Math.floor(Date.now() / 1000);
const body = JSON.stringify({ type: "invoice.paid", data: { id: "inv_1", note: "café ☕" } });

test("a signed delivery verifies with the reference Standard Webhooks library", () => {
  const secret = generateSecret();
  const headers = webhookHeaders([parseSecret(secret)], "msg_1", nowSeconds(), body);

  assert.equal(headers["content-type"], "application/json");
  assert.equal(headers["webhook-id"], "msg_1");
  assert.deepEqual(new Webhook(secret).verify(body, headers), JSON.parse(body));
});

test("a Buffer body signs the same bytes the receiver gets", () => {
  const secret = generateSecret();
  const timestamp = nowSeconds();
  const bytes = Buffer.from(body);

  const headers = webhookHeaders([parseSecret(secret)], "msg_2", timestamp, bytes);

  assert.deepEqual(new Webhook(secret).verify(bytes, headers), JSON.parse(body));
  assert.equal(
    headers["webhook-signature"],
    new Webhook(secret).sign("msg_2", new Date(timestamp * 1000), body),
  );
});

test("during a rotation, receivers holding only the old or only the new secret both verify", () => {
  const oldSecret = generateSecret();
  const newSecret = generateSecret();
  const headers = webhookHeaders(
    [parseSecret(oldSecret), parseSecret(newSecret)],
    "msg_3",
    nowSeconds(),
    body,
  );

  assert.equal(headers["webhook-signature"]?.split(" ").length, 2);
  assert.deepEqual(new Webhook(oldSecret).verify(body, headers), JSON.parse(body));
  assert.deepEqual(new Webhook(newSecret).verify(body, headers), JSON.parse(body));
  assert.throws(() => new Webhook(generateSecret()).verify(body, headers), WebhookVerificationError);
});

test("a tampered body, id or timestamp fails verification", () => {
  const secret = generateSecret();
  const timestamp = nowSeconds();
  const headers = webhookHeaders([parseSecret(secret)], "msg_4", timestamp, body);
  const verifier = new Webhook(secret);

  assert.throws(() => verifier.verify(body.replace("inv_1", "inv_2"), headers), WebhookVerificationError);
  assert.throws(() => verifier.verify(body, { ...headers, "webhook-id": "msg_5" }), WebhookVerificationError);
  assert.throws(
    () => verifier.verify(body, { ...headers, "webhook-timestamp": String(timestamp - 1) }),
    WebhookVerificationError,
  );
});

test("signPayload gives one v1 signature per key, in key order", () => {
  const keys = [parseSecret(generateSecret()), parseSecret(generateSecret()), parseSecret(generateSecret())];
  const all = signPayload(keys, "msg_6", 1_700_000_000, body).split(" ");

  assert.equal(all.length, 3);
  keys.forEach((key, index) => {
    assert.equal(all[index], signPayload([key], "msg_6", 1_700_000_000, body));
    assert.match(all[index] ?? "", /^v1,[A-Za-z0-9+/]{43}=$/);
  });
});

test("signing refuses to produce an unsigned or unverifiable delivery", () => {
  assert.throws(() => signPayload([], "msg_7", nowSeconds(), body), RangeError);
  assert.throws(() => signPayload([parseSecret(generateSecret())], "msg_7", 1.5, body), RangeError);
});

test("generated secrets parse to 24-byte keys and are distinct", () => {
  const secrets = new Set(Array.from({ length: 100 }, () => generateSecret()));
  assert.equal(secrets.size, 100);
  for (const secret of secrets) {
    assert.match(secret, /^whsec_[A-Za-z0-9+/]{32}$/);
    assert.equal(parseSecret(secret).length, 24);
  }
});

test("generateSecret uses the random source it is given", () => {
  const secret = generateSecret((n) => Buffer.alloc(n, 7));
  assert.equal(secret, `whsec_${Buffer.alloc(24, 7).toString("base64")}`);
  assert.deepEqual(parseSecret(secret), Buffer.alloc(24, 7));
});

test("secrets of 24 to 64 bytes are accepted", () => {
  for (const size of [24, 32, 64]) {
    const key = Buffer.alloc(size, 1);
    assert.deepEqual(parseSecret(`whsec_${key.toString("base64")}`), key);
  }
});

test("malformed secrets are rejected without echoing them", () => {
  const bad = [
    "",
    "sk_live_c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0",
    `whsec_${Buffer.alloc(16, 3).toString("base64")}`,
    `whsec_${Buffer.alloc(65, 3).toString("base64")}`,
    "whsec_not base64 at all but long enough!!",
    `whsec_${Buffer.alloc(24, 3).toString("base64url").replace(/A/g, "-")}_`,
    `whsec_${Buffer.alloc(32, 9).toString("base64").replace(/=$/, "")}`,
  ];
  for (const secret of bad) {
    assert.throws(
      () => parseSecret(secret),
      (error: unknown) => {
        assert.ok(error instanceof InvalidSecretError);
        assert.equal(error.name, "InvalidSecretError");
        const material = secret.replace(/^whsec_/, "");
        if (material.length > 0) {
          assert.ok(!error.message.includes(material), `message echoes the secret: ${error.message}`);
        }
        return true;
      },
    );
  }
});
