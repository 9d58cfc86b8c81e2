import assert from "node:assert/strict";
import { test } from "node:test";
import { createAddressPolicy, literalUrlProblem } from "./index.js";

const strict = createAddressPolicy();

const LOOPBACK = "a loopback address";
const PRIVATE = "a private address";
const LINK_LOCAL = "a link-local address";
const METADATA = "a link-local address (cloud metadata)";
const RESERVED = "a reserved address";

test("every address that is not public internet is blocked by default, named by its class", () => {
  const expected: Record<string, string> = {
    "0.0.0.0": "an unspecified address",
    "0.1.2.3": "an unspecified address",
    "127.0.0.1": LOOPBACK,
    "127.255.255.254": LOOPBACK,
    "10.0.0.5": PRIVATE,
    "172.16.0.1": PRIVATE,
    "172.31.255.255": PRIVATE,
    "192.168.1.1": PRIVATE,
    "169.254.169.254": METADATA,
    "169.254.1.1": LINK_LOCAL,
    "100.64.0.1": "a shared (CGNAT) address",
    "100.127.255.255": "a shared (CGNAT) address",
    "224.0.0.1": "a multicast address",
    "239.255.255.250": "a multicast address",
    "255.255.255.255": "a broadcast address",
    "240.0.0.1": RESERVED,
    "192.0.0.8": RESERVED,
    "192.0.2.1": RESERVED,
    "198.18.0.1": RESERVED,
    "198.51.100.7": RESERVED,
    "203.0.113.9": RESERVED,
    "::": "an unspecified address",
    "::1": LOOPBACK,
    "fc00::1": "a unique local address",
    "fd12:3456::1": "a unique local address",
    "fd00:ec2::254": "a unique local address",
    "fe80::1": LINK_LOCAL,
    "fe80::1%eth0": LINK_LOCAL,
    "fec0::1": "a site-local address",
    "ff02::1": "a multicast address",
    "100::1": RESERVED,
    "2001:db8::1": RESERVED,
    "64:ff9b:1::a00:5": RESERVED,
    // The rest of IANA's special-purpose registries, globally reachable or not.
    "192.31.196.1": RESERVED,
    "192.52.193.1": RESERVED,
    "192.175.48.1": RESERVED,
    "192.88.99.1": RESERVED,
    "100:0:0:1::1": RESERVED,
    "2001:2::1": RESERVED,
    "2001:1::1": RESERVED,
    "2001:4:112::1": RESERVED,
    "2001:20::1": RESERVED,
    "2620:4f:8000::1": RESERVED,
    "3fff::1": RESERVED,
    "5f00::1": RESERVED,
  };
  const actual = Object.fromEntries(Object.keys(expected).map((a) => [a, strict.problem(a)]));
  assert.deepEqual(actual, expected);
});

test("IPv6 forms that reach an IPv4 host are judged by that host", () => {
  const expected: Record<string, string> = {
    "::ffff:127.0.0.1": `${LOOPBACK} (IPv4-mapped form of 127.0.0.1)`,
    "::ffff:7f00:1": `${LOOPBACK} (IPv4-mapped form of 127.0.0.1)`,
    "0:0:0:0:0:ffff:10.0.0.5": `${PRIVATE} (IPv4-mapped form of 10.0.0.5)`,
    "::ffff:169.254.169.254": `${METADATA} (IPv4-mapped form of 169.254.169.254)`,
    "::ffff:0:a00:5": `${PRIVATE} (IPv4-translated form of 10.0.0.5)`,
    "::127.0.0.1": `${LOOPBACK} (IPv4-compatible form of 127.0.0.1)`,
    "::a00:5": `${PRIVATE} (IPv4-compatible form of 10.0.0.5)`,
    "64:ff9b::10.0.0.5": `${PRIVATE} (NAT64 form of 10.0.0.5)`,
    "64:ff9b::7f00:1": `${LOOPBACK} (NAT64 form of 127.0.0.1)`,
    "2002:7f00:1::1": `${LOOPBACK} (6to4 form of 127.0.0.1)`,
    "2002:a9fe:a9fe::": `${METADATA} (6to4 form of 169.254.169.254)`,
    // Teredo stores the client address with every bit inverted: f5ff:fffe is 10.0.0.1.
    "2001:0:4136:e378:8000:63bf:f5ff:fffe": `${PRIVATE} (Teredo form of 10.0.0.1)`,
  };
  const actual = Object.fromEntries(Object.keys(expected).map((a) => [a, strict.problem(a)]));
  assert.deepEqual(actual, expected);
});

test("public addresses, and IPv6 forms of public IPv4 addresses, are allowed", () => {
  for (const address of [
    "8.8.8.8",
    "1.1.1.1",
    "11.0.0.0",
    "100.63.255.255",
    "100.128.0.0",
    "169.253.255.255",
    "172.15.255.255",
    "172.32.0.0",
    "192.169.0.1",
    "223.255.255.255",
    "2606:4700:4700::1111",
    "2001:4860:4860::8888",
    "::ffff:8.8.8.8",
    "64:ff9b::808:808",
    "2002:808:808::1",
  ]) {
    assert.equal(strict.problem(address), undefined, address);
  }
  assert.equal(strict.problem("example.com"), "not an IP address");
});

test("allowed ranges are let back in with their IPv4-mapped form, and nothing else", () => {
  const policy = createAddressPolicy({
    allowedCidrs: [
      { address: "127.0.0.0", prefix: 8 },
      { address: "::1", prefix: 128 },
      { address: "10.1.0.0", prefix: 16 },
    ],
  });
  for (const address of ["127.0.0.1", "127.0.0.2", "::1", "::ffff:127.0.0.1", "::ffff:7f00:2", "10.1.2.3"]) {
    assert.equal(policy.problem(address), undefined, address);
  }
  // Forms that reach 127.x through a translator or relay are another path: not covered.
  assert.equal(policy.problem("64:ff9b::7f00:1"), `${LOOPBACK} (NAT64 form of 127.0.0.1)`);
  assert.equal(policy.problem("2002:7f00:1::"), `${LOOPBACK} (6to4 form of 127.0.0.1)`);
  assert.equal(policy.problem("::127.0.0.1"), `${LOOPBACK} (IPv4-compatible form of 127.0.0.1)`);
  assert.equal(policy.problem("::ffff:0:7f00:1"), `${LOOPBACK} (IPv4-translated form of 127.0.0.1)`);
  assert.equal(policy.problem("10.2.0.1"), PRIVATE);
  assert.equal(policy.problem("192.168.1.1"), PRIVATE);
  assert.equal(policy.problem("169.254.169.254"), METADATA);
  assert.equal(policy.problem("::2"), `an unspecified address (IPv4-compatible form of 0.0.0.2)`);
});

test("an embedded form is allowed only when an IPv6 range names it", () => {
  const policy = createAddressPolicy({ allowedCidrs: [{ address: "64:ff9b::7f00:0", prefix: 104 }] });
  assert.equal(policy.problem("64:ff9b::7f00:1"), undefined);
  assert.equal(policy.problem("127.0.0.1"), LOOPBACK);
  assert.equal(policy.problem("64:ff9b::a00:1"), `${PRIVATE} (NAT64 form of 10.0.0.1)`);
});

test("an allowed IPv6 range lets in no IPv4 host, not even through its IPv4-mapped form", () => {
  for (const range of [
    { address: "::", prefix: 0 },
    { address: "::ffff:0:0", prefix: 96 },
  ]) {
    const policy = createAddressPolicy({ allowedCidrs: [range] });
    const named = `${range.address}/${range.prefix}`;
    assert.equal(policy.problem("10.0.0.1"), PRIVATE, named);
    assert.equal(policy.problem("169.254.169.254"), METADATA, named);
    // The mapped form reaches the same IPv4 host through a dual-stack socket.
    assert.equal(policy.problem("::ffff:10.0.0.1"), `${PRIVATE} (IPv4-mapped form of 10.0.0.1)`, named);
    assert.equal(
      policy.problem("::ffff:a9fe:a9fe"),
      `${METADATA} (IPv4-mapped form of 169.254.169.254)`,
      named,
    );
  }
});

test("a malformed allowed range is refused when the policy is made", () => {
  for (const [address, prefix] of [
    ["127.1", 8],
    ["10.0.0.0", 33],
    ["::1", 129],
    ["10.0.0.0", -1],
    ["10.0.0.0", 1.5],
    ["example.com", 8],
  ] as const) {
    assert.throws(() => createAddressPolicy({ allowedCidrs: [{ address, prefix }] }), RangeError, address);
  }
});

test("URLs are checked after WHATWG normalisation of every literal form of an address", () => {
  const loopback = "must not point at 127.0.0.1, a loopback address";
  const expected: Record<string, string> = {
    "http://127.0.0.1/": loopback,
    "http://2130706433/": loopback,
    "http://0177.0.0.1/": loopback,
    "http://0x7f.1/": loopback,
    "http://127.1/": loopback,
    "http://017700000001/": loopback,
    "http://0x7f000001:8080/hooks": loopback,
    "http://127.0.0.1./": loopback,
    "http://%31%32%37.0.0.1/": loopback,
    "http://\u2460\u2461\u2466.0.0.1/": loopback,
    "http://127\u30020\u30020\u30021/": loopback,
    "http://[::ffff:127.0.0.1]/":
      "must not point at ::ffff:7f00:1, a loopback address (IPv4-mapped form of 127.0.0.1)",
    "http://[0:0:0:0:0:ffff:7f00:1]/":
      "must not point at ::ffff:7f00:1, a loopback address (IPv4-mapped form of 127.0.0.1)",
    "http://[::1]:8080/": "must not point at ::1, a loopback address",
    "http://0/": "must not point at 0.0.0.0, an unspecified address",
    "http://[::]/": "must not point at ::, an unspecified address",
    "http://10.0.0.5:8080/hooks": "must not point at 10.0.0.5, a private address",
    "https://169.254.169.254/latest/meta-data/": `must not point at 169.254.169.254, ${METADATA}`,
    "http://0xa9fea9fe/": `must not point at 169.254.169.254, ${METADATA}`,
    "http://[64:ff9b::10.0.0.5]/":
      "must not point at 64:ff9b::a00:5, a private address (NAT64 form of 10.0.0.5)",
    "http://[fd00::1]/": "must not point at fd00::1, a unique local address",
    "http://[fe80::1]/": `must not point at fe80::1, ${LINK_LOCAL}`,
    "ftp://a.test/": "must use http or https",
    "file:///etc/passwd": "must use http or https",
    "gopher://127.0.0.1:6379/_": "must use http or https",
    "javascript:alert(1)": "must use http or https",
    "https://user:pass@a.test/": "must not carry credentials",
    "https://user@a.test/": "must not carry credentials",
    "not a url": "is not an absolute URL",
    "/hooks": "is not an absolute URL",
    "http://1.2.3.4.5/": "is not an absolute URL",
    "http://[fe80::1%25eth0]/": "is not an absolute URL",
  };
  const actual = Object.fromEntries(
    Object.keys(expected).map((url) => [url, literalUrlProblem(url, strict)]),
  );
  assert.deepEqual(actual, expected);
});

test("hostnames and public literal addresses pass the static check; allowed ranges pass too", () => {
  for (const url of [
    "https://example.com/hooks",
    // Only known after DNS: checked at delivery time.
    "https://localhost/",
    "http://8.8.8.8/",
    "http://[2606:4700:4700::1111]:8443/",
  ]) {
    assert.equal(literalUrlProblem(url, strict), undefined, url);
  }
  const loopbackAllowed = createAddressPolicy({ allowedCidrs: [{ address: "127.0.0.0", prefix: 8 }] });
  assert.equal(literalUrlProblem("http://127.0.0.1:3000/hooks", loopbackAllowed), undefined);
  assert.equal(literalUrlProblem("http://[::ffff:127.0.0.1]:3000/", loopbackAllowed), undefined);
  assert.equal(
    literalUrlProblem("http://[::1]:3000/", loopbackAllowed),
    "must not point at ::1, a loopback address",
  );
});
