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

// Every block of the IANA IPv4 Special-Purpose Address Registry
// (https://www.iana.org/assignments/iana-ipv4-special-registry/, RFC 6890 and later), whether or
// not the registry marks it globally reachable (no webhook receiver lives on AS112 or AMT relays),
// plus multicast (IPv4 Multicast Address Space Registry, RFC 5771). Order matters where ranges
// nest: cloud metadata before link-local, broadcast before the reserved 240.0.0.0/4.
const IPV4_CLASSES: readonly (readonly [string, Ranges])[] = [
  ["an unspecified address", [["0.0.0.0", 8]]], // "this network", RFC 791
  ["a loopback address", [["127.0.0.0", 8]]], // RFC 1122
  [
    "a private address", // RFC 1918
    [
      ["10.0.0.0", 8],
      ["172.16.0.0", 12],
      ["192.168.0.0", 16],
    ],
  ],
  ["a link-local address (cloud metadata)", [["169.254.169.254", 32]]],
  ["a link-local address", [["169.254.0.0", 16]]], // RFC 3927
  ["a shared (CGNAT) address", [["100.64.0.0", 10]]], // RFC 6598
  ["a multicast address", [["224.0.0.0", 4]]], // RFC 5771
  ["a broadcast address", [["255.255.255.255", 32]]], // RFC 8190
  [
    "a reserved address",
    [
      ["192.0.0.0", 24], // IETF protocol assignments (DS-Lite, PCP and TURN anycast, NAT64 discovery), RFC 6890
      ["192.0.2.0", 24], // TEST-NET-1, RFC 5737
      ["192.31.196.0", 24], // AS112-v4, RFC 7535
      ["192.52.193.0", 24], // AMT, RFC 7450
      ["192.88.99.0", 24], // deprecated 6to4 relay anycast, RFC 7526
      ["192.175.48.0", 24], // Direct Delegation AS112 service, RFC 7534
      ["198.18.0.0", 15], // benchmarking, RFC 2544
      ["198.51.100.0", 24], // TEST-NET-2, RFC 5737
      ["203.0.113.0", 24], // TEST-NET-3, RFC 5737
      ["240.0.0.0", 4], // reserved, RFC 1112
    ],
  ],
];

// Every block of the IANA IPv6 Special-Purpose Address Registry
// (https://www.iana.org/assignments/iana-ipv6-special-registry/), plus multicast (RFC 4291) and the
// deprecated site-local range (RFC 3879). The registry's translation blocks that carry an IPv4
// address (::ffff:0:0/96, 64:ff9b::/96, 2002::/16, Teredo 2001::/32) are judged by that address
// before these classes are consulted (see embeddedIpv4).
const IPV6_CLASSES: readonly (readonly [string, Ranges])[] = [
  ["an unspecified address", [["::", 128]]], // RFC 4291
  ["a loopback address", [["::1", 128]]], // RFC 4291
  ["a unique local address", [["fc00::", 7]]], // RFC 4193
  ["a link-local address", [["fe80::", 10]]], // RFC 4291
  ["a site-local address", [["fec0::", 10]]], // RFC 3879
  ["a multicast address", [["ff00::", 8]]], // RFC 4291
  [
    "a reserved address",
    [
      ["64:ff9b:1::", 48], // local-use IPv4/IPv6 translation, RFC 8215
      ["100::", 64], // discard-only, RFC 6666
      ["100:0:0:1::", 64], // dummy IPv6 prefix, RFC 9780
      ["2001::", 23], // IETF protocol assignments (PCP/TURN anycast, benchmarking, AMT, AS112, ORCHID), RFC 2928
      ["2001:db8::", 32], // documentation, RFC 3849
      ["2620:4f:8000::", 48], // Direct Delegation AS112 service, RFC 7534
      ["3fff::", 20], // documentation, RFC 9637
      ["5f00::", 16], // segment routing (SRv6) SIDs, RFC 9602
    ],
  ],
];

/**
 * Creates the policy deliveries are held to: every address in IANA's special-purpose registries
 * (loopback, private, link-local and cloud metadata, CGNAT, multicast, unspecified, broadcast,
 * reserved, documentation, AS112, AMT, IPv6 ULA and link-local...) is refused, and so are the
 * IPv4-mapped, -compatible, -translated, NAT64, 6to4 and Teredo forms of those, unless the address
 * lies in `allowedCidrs`. Throws a RangeError for a bad range.
 *
 * An allowed IPv4 range covers that IPv4 address and its IPv4-mapped form (::ffff:a.b.c.d, the same
 * host reached through a dual-stack socket), and nothing else: the NAT64, 6to4, IPv4-compatible,
 * -translated and Teredo forms reach the host through a translator or relay, a path the operator
 * has not opened, so they stay refused unless an IPv6 range in `allowedCidrs` covers them.
 */
export function createAddressPolicy(options: AddressPolicyOptions = {}): AddressPolicy {
  // Apart by family: BlockList also matches an IPv4 address against IPv6 ranges (through its
  // mapped form), so an allowed ::/0 let in 10.0.0.1 and 169.254.169.254, which it does not name.
  const allowed = { ipv4: new BlockList(), ipv6: new BlockList() };
  for (const { address, prefix } of options.allowedCidrs ?? []) {
    const family = ipFamily(address);
    const bits = family === "ipv4" ? 32 : 128;
    if (family === undefined || !Number.isInteger(prefix) || prefix < 0 || prefix > bits) {
      throw new RangeError(`${address}/${prefix} is not an IPv4 or IPv6 CIDR range`);
    }
    allowed[family].addSubnet(address, prefix, family);
  }
  const ipv4 = compile(IPV4_CLASSES, "ipv4");
  const ipv6 = compile(IPV6_CLASSES, "ipv6");

  function problem(address: string): string | undefined {
    const family = ipFamily(address);
    if (family === undefined) return "not an IP address";
    const plain = withoutZone(address);
    if (family === "ipv4")
      return allowed.ipv4.check(plain, family) ? undefined : classify(ipv4, plain, family);
    const embedded = embeddedIpv4(plain);
    // An IPv4-mapped address is its IPv4 host over a dual-stack socket: only an IPv4 range lets it
    // in (BlockList matches IPv4 ranges against the mapped form), never an IPv6 one such as ::/0.
    const mapped = embedded?.form === "IPv4-mapped";
    if (mapped ? allowed.ipv4.check(plain, family) : allowed.ipv6.check(plain, family)) return undefined;
    if (embedded !== undefined) {
      const inner = classify(ipv4, embedded.ipv4, "ipv4");
      return inner && `${inner} (${embedded.form} form of ${embedded.ipv4})`;
    }
    return classify(ipv6, plain, family);
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
