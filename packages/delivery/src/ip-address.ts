import { isIPv4, isIPv6 } from "node:net";

/** An IPv4 address carried inside an IPv6 one, and the name of the scheme that carries it. */
export interface EmbeddedIpv4 {
  form: "IPv4-mapped" | "IPv4-compatible" | "IPv4-translated" | "NAT64" | "6to4" | "Teredo";
  ipv4: string;
}

/** "ipv4", "ipv6" or undefined for text that is not an IP address (a zone id such as `%eth0` is ignored). */
export function ipFamily(address: string): "ipv4" | "ipv6" | undefined {
  if (isIPv4(address)) return "ipv4";
  return isIPv6(withoutZone(address)) ? "ipv6" : undefined;
}

/** The address without an IPv6 zone id (`fe80::1%eth0` → `fe80::1`). */
export function withoutZone(address: string): string {
  const percent = address.indexOf("%");
  return percent === -1 ? address : address.slice(0, percent);
}

/**
 * The IPv4 address an IPv6 address stands for when it is one of the forms that reach an IPv4 host
 * (mapped, compatible, SIIT-translated, well-known NAT64, 6to4 or Teredo); undefined otherwise.
 * `address` must be a valid IPv6 address.
 */
export function embeddedIpv4(address: string): EmbeddedIpv4 | undefined {
  const b = ipv6Bytes(address);
  const word = (i: number): number => ((b[i] ?? 0) << 8) | (b[i + 1] ?? 0);
  const ipv4At = (i: number, mask = 0): string =>
    [0, 1, 2, 3].map((k) => ((b[i + k] ?? 0) ^ mask) & 0xff).join(".");
  const zeros = (from: number, to: number): boolean => b.subarray(from, to).every((byte) => byte === 0);

  if (zeros(0, 10) && word(10) === 0xffff) return { form: "IPv4-mapped", ipv4: ipv4At(12) };
  if (zeros(0, 8) && word(8) === 0xffff && word(10) === 0)
    return { form: "IPv4-translated", ipv4: ipv4At(12) };
  // ::/96 minus :: and ::1, which are classified as IPv6 addresses of their own.
  if (zeros(0, 12) && !(zeros(12, 15) && (b[15] ?? 0) <= 1))
    return { form: "IPv4-compatible", ipv4: ipv4At(12) };
  // The well-known NAT64 prefix 64:ff9b::/96 (RFC 6052) carries the IPv4 address last.
  if (word(0) === 0x64 && word(2) === 0xff9b && zeros(4, 12)) return { form: "NAT64", ipv4: ipv4At(12) };
  if (word(0) === 0x2002) return { form: "6to4", ipv4: ipv4At(2) };
  // Teredo (2001::/32) carries the client's IPv4 address with every bit inverted.
  if (word(0) === 0x2001 && word(2) === 0) return { form: "Teredo", ipv4: ipv4At(12, 0xff) };
  return undefined;
}

/** The 16 bytes of a valid IPv6 address, including one written with a dotted IPv4 tail. */
export function ipv6Bytes(address: string): Uint8Array {
  let text = withoutZone(address).toLowerCase();
  const tail = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (tail) {
    const [a, b, c, d] = tail.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, tail.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = "", rest] = text.split("::");
  const groups = (part: string | undefined): string[] => (part ? part.split(":") : []);
  const left = groups(head);
  const right = groups(rest);
  const all =
    rest === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill("0"), ...right];
  const bytes = new Uint8Array(16);
  all.forEach((group, i) => {
    const value = Number.parseInt(group, 16);
    bytes[2 * i] = value >> 8;
    bytes[2 * i + 1] = value & 0xff;
  });
  return bytes;
}
