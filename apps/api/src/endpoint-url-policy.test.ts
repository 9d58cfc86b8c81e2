import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { status } from "@grpc/grpc-js";
import { readTestSettings } from "@hookline/testkit";
import { expectStatus, startTestApi, type TestApi, uniqueTenant } from "./test-helpers.js";

const settings = readTestSettings(process.env);

// The test backend allows 127.0.0.0/8 (HOOKLINE_ALLOWED_CIDRS), as a local deployment would;
// every other non-public address stays blocked.
const T = uniqueTenant("urlpolicy");
let api: TestApi;

before(async () => {
  api = await startTestApi(settings);
  await api.call("CreateEndpoint", { tenant_id: T, id: "existing", url: "https://example.com/hooks" });
});
after(() => api.close());

const BLOCKED: Record<string, string> = {
  "http://10.0.0.5/hooks": "url must not point at 10.0.0.5, a private address",
  "http://169.254.169.254/latest/meta-data/":
    "url must not point at 169.254.169.254, a link-local address (cloud metadata)",
  "http://0xa9fea9fe/": "url must not point at 169.254.169.254, a link-local address (cloud metadata)",
  "http://0/": "url must not point at 0.0.0.0, an unspecified address",
  "http://[::1]:8080/": "url must not point at ::1, a loopback address",
  "http://[::ffff:192.168.0.1]/":
    "url must not point at ::ffff:c0a8:1, a private address (IPv4-mapped form of 192.168.0.1)",
  "http://[fd00::1]/": "url must not point at fd00::1, a unique local address",
  // IANA special-purpose blocks that are globally reachable are still no place for a webhook.
  "http://192.31.196.1/": "url must not point at 192.31.196.1, a reserved address",
  "http://192.52.193.1/": "url must not point at 192.52.193.1, a reserved address",
  "http://192.175.48.1/": "url must not point at 192.175.48.1, a reserved address",
  // 127.0.0.0/8 is allowed here, but not its NAT64, 6to4 or IPv4-compatible forms.
  "http://[64:ff9b::7f00:1]/":
    "url must not point at 64:ff9b::7f00:1, a loopback address (NAT64 form of 127.0.0.1)",
  "http://[2002:7f00:1::]/":
    "url must not point at 2002:7f00:1::, a loopback address (6to4 form of 127.0.0.1)",
  "http://[::127.0.0.1]/":
    "url must not point at ::7f00:1, a loopback address (IPv4-compatible form of 127.0.0.1)",
  "http://a.test:0/": "url must not use port 0",
  "gopher://127.0.0.1:6379/_": "url must use http or https",
  "https://user:secret@example.com/": "url must not carry credentials",
};

test("CreateEndpoint refuses URLs that can never be delivered to, naming url", async () => {
  let n = 0;
  for (const [url, message] of Object.entries(BLOCKED)) {
    const error = await expectStatus(
      api.call("CreateEndpoint", { tenant_id: T, id: `blocked-${n++}`, url }),
      status.INVALID_ARGUMENT,
    );
    assert.equal(error.details, message);
  }
});

test("UpdateEndpoint refuses them too and leaves the endpoint as it was", async () => {
  for (const [url, message] of Object.entries(BLOCKED)) {
    const error = await expectStatus(
      api.call("UpdateEndpoint", { tenant_id: T, id: "existing", url }),
      status.INVALID_ARGUMENT,
    );
    assert.equal(error.details, message);
  }
  const { endpoint } = await api.call("GetEndpoint", { tenant_id: T, id: "existing" });
  assert.equal(endpoint.url, "https://example.com/hooks");
});

test("hostnames, public addresses and allowed ranges are accepted, stored in WHATWG form", async () => {
  const accepted: [string, string][] = [
    ["https://hooks.example.com/in", "https://hooks.example.com/in"],
    // Resolved and checked at delivery time, not here.
    ["http://localhost:8080/hooks", "http://localhost:8080/hooks"],
    ["http://8.8.8.8/hooks", "http://8.8.8.8/hooks"],
    ["http://[2606:4700:4700::1111]/hooks", "http://[2606:4700:4700::1111]/hooks"],
    ["http://127.0.0.1:3000/hooks", "http://127.0.0.1:3000/hooks"],
    ["http://2130706433:3000/hooks", "http://127.0.0.1:3000/hooks"],
    // What a delivery would really connect to, not what the text seems to say.
    ["http://evil.com\\@127.0.0.1/", "http://evil.com/@127.0.0.1/"],
    ["http:/example.com/", "http://example.com/"],
    ["http:example.com", "http://example.com/"],
    ["HTTPS://Example.COM:443/a/../b", "https://example.com/b"],
  ];
  let n = 0;
  for (const [url, stored] of accepted) {
    const { endpoint } = await api.call("CreateEndpoint", { tenant_id: T, id: `ok-${n}`, url });
    assert.equal(endpoint.url, stored, url);
    const read = await api.call("GetEndpoint", { tenant_id: T, id: `ok-${n++}` });
    assert.equal(read.endpoint.url, stored, `${url} read back`);
  }
  const updated = await api.call("UpdateEndpoint", { tenant_id: T, id: "existing", url: "http:example.com" });
  assert.equal(updated.endpoint.url, "http://example.com/");
});
