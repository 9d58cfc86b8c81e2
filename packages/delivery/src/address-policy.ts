import { BlockList } from "node:net";
import { embeddedIpv4, ipFamily, withoutZone } from "./ip-address.js";

/** A range of addresses, e.g. `{ address: "127.0.0.0", prefix: 8 }` for 127.0.0.0/8. */
export interface CidrRange {
  address: string;
  prefix: number;
}

/** Decides which IP addresses a delivery may connect to. */
export interface AddressPolicy {
  /** Why a delivery must not connect to `address` (e.g. "a loopback address"), or undefined if it may. */
  problem(address: string): string | undefined;
}

export interface AddressPolicyOptions {
  /** Ranges allowed even though they are blocked by default (e.g. 127.0.0.0/8 for local testing). */
  allowedCidrs?: readonly CidrRange[];
}

type Family = "ipv4" | "ipv6";
type Ranges = readonly (readonly [string, number])[];

// Everything that is not the public internet. Order matters where ranges nest: broadcast is
// named before the reserved 240.0.0.0/4 that contains it.
const IPV4_CLASSES: readonly (readonly [string, Ranges])[] = [
  ["an unspecified address", [["0.0.0.0", 8]]],
  ["a loopback address", [["127.0.0.0", 8]]],
  [
    "a private address",
    [
      ["10.0.0.0", 8],
      ["172.16.0.0", 12],
      ["192.168.0.0", 16],
    ],
  ],
  ["a link-local address (cloud metadata)", [["169.254.169.254", 32]]],
  ["a link-local address", [["169.254.0.0", 16]]],
  ["a shared (CGNAT) address", [["100.64.0.0", 10]]],
  ["a multicast address", [["224.0.0.0", 4]]],
  ["a broadcast address", [["255.255.255.255", 32]]],
  [
    "a reserved address",
    [
      ["192.0.0.0", 24],
      ["192.0.2.0", 24],
      ["192.88.99.0", 24],
      ["198.18.0.0", 15],
      ["198.51.100.0", 24],
      ["203.0.113.0", 24],
      ["240.0.0.0", 4],
    ],
  ],
];

// IPv6 forms that carry an IPv4 address (mapped, NAT64, 6to4...) are judged by that address.
const IPV6_CLASSES: readonly (readonly [string, Ranges])[] = [
  ["an unspecified address", [["::", 128]]],
  ["a loopback address", [["::1", 128]]],
  ["a unique local address", [["fc00::", 7]]],
  ["a link-local address", [["fe80::", 10]]],
  ["a site-local address", [["fec0::", 10]]],
  ["a multicast address", [["ff00::", 8]]],
  [
    "a reserved address",
    [
      ["100::", 64],
      ["64:ff9b:1::", 48],
      ["2001:db8::", 32],
      ["3fff::", 20],
    ],
  ],
];

/**
 * Creates the policy deliveries are held to: every address that is not public internet is
 * refused (loopback, private, link-local and cloud metadata, CGNAT, multicast, unspecified,
 * broadcast, reserved, IPv6 ULA and link-local, and IPv4-mapped, -compatible, NAT64, 6to4 and
 * Teredo forms of those) unless it lies in `allowedCidrs`. Throws a RangeError for a bad range.
 */
export function createAddressPolicy(options: AddressPolicyOptions = {}): AddressPolicy {
  const allowed = new BlockList();
  for (const { address, prefix } of options.allowedCidrs ?? []) {
    const family = ipFamily(address);
    const bits = family === "ipv4" ? 32 : 128;
    if (family === undefined || !Number.isInteger(prefix) || prefix < 0 || prefix > bits) {
      throw new RangeError(`${address}/${prefix} is not an IPv4 or IPv6 CIDR range`);
    }
    allowed.addSubnet(address, prefix, family);
  }
  const ipv4 = compile(IPV4_CLASSES, "ipv4");
  const ipv6 = compile(IPV6_CLASSES, "ipv6");

  function problem(address: string): string | undefined {
    const family = ipFamily(address);
    if (family === undefined) return "not an IP address";
    const plain = withoutZone(address);
    // BlockList matches IPv4 ranges against IPv4-mapped IPv6 addresses too.
    if (allowed.check(plain, family)) return undefined;
    if (family === "ipv4") return classify(ipv4, plain, family);
    const own = classify(ipv6, plain, family);
    if (own !== undefined) return own;
    const embedded = embeddedIpv4(plain);
    if (embedded === undefined) return undefined;
    const inner = problem(embedded.ipv4);
    return inner && `${inner} (${embedded.form} form of ${embedded.ipv4})`;
  }

  return { problem };
}

function compile(classes: readonly (readonly [string, Ranges])[], family: Family) {
  return classes.map(([description, ranges]) => {
    const list = new BlockList();
    for (const [address, prefix] of ranges) list.addSubnet(address, prefix, family);
    return { description, list };
  });
}

function classify(
  classes: readonly { description: string; list: BlockList }[],
  address: string,
  family: Family,
): string | undefined {
  return classes.find(({ list }) => list.check(address, family))?.description;
}
