import type { LookupAddress } from "node:dns";
import type { LookupFunction } from "node:net";
import type { AddressPolicy } from "./address-policy.js";
import { ipFamily } from "./ip-address.js";

/** Resolves a hostname to every address it has. */
export type LookupAll = (hostname: string) => Promise<readonly LookupAddress[]>;

/** A delivery refused because of where it would connect; the message is written for the customer. */
export class BlockedAddressError extends Error {
  readonly code = "ERR_HOOKLINE_BLOCKED_ADDRESS";
  constructor(message: string) {
    super(message);
    this.name = "BlockedAddressError";
  }
}

/**
 * A `lookup` for net.connect/tls.connect that resolves the name once, refuses the connection when
 * ANY address is blocked (an attacker's name may mix a public and a private answer), and hands
 * the socket exactly the addresses it checked. The socket never resolves the name again, so a
 * second answer (DNS rebinding) cannot slip in between check and connect; TLS still verifies and
 * sends SNI for the hostname, and the Host header is untouched.
 */
export function guardedLookup(policy: AddressPolicy, lookup: LookupAll): LookupFunction {
  return (hostname, options, callback) => {
    const fail = (error: NodeJS.ErrnoException): void => callback(error, "");
    // Through a promise, so a resolver that throws fails this connection instead of the process.
    Promise.resolve(hostname)
      .then(lookup)
      .then((answers) => {
        const addresses: LookupAddress[] = [];
        for (const { address } of answers) {
          const problem = policy.problem(address);
          if (problem !== undefined) {
            fail(new BlockedAddressError(`blocked: resolves to ${address}, ${problem}`));
            return;
          }
          addresses.push({ address, family: ipFamily(address) === "ipv6" ? 6 : 4 });
        }
        const family = familyNumber(options.family);
        const usable = family === 0 ? addresses : addresses.filter((a) => a.family === family);
        const first = usable[0];
        if (first === undefined) {
          fail(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" }));
        } else if (options.all) {
          callback(null, usable);
        } else {
          callback(null, first.address, first.family);
        }
      }, fail);
  };
}

function familyNumber(family: number | "IPv4" | "IPv6" | undefined): number {
  if (family === "IPv4") return 4;
  if (family === "IPv6") return 6;
  return family ?? 0;
}
