import { promises as dns, type LookupAddress } from "node:dns";
import { codeOf } from "./error-text.js";
import type { LookupAll } from "./guarded-lookup.js";

/** The system resolver (getaddrinfo, so /etc/hosts and search domains apply), all addresses. */
export const systemLookup: LookupAll = (hostname) => dns.lookup(hostname, { all: true });

export interface DnsLookupOptions {
  /** Nameservers as `ip` or `ip:port` (default: the host's, read from /etc/resolv.conf at start). */
  servers?: readonly string[];
  /** How long a lookup may take in all: the attempt's deadline, which also bounds its connect. */
  deadlineMs: number;
  /** Once A records have come, how much longer AAAA is waited for (default 50 ms, RFC 8305). */
  aaaaGraceMs?: number;
  /** Where names DNS does not know, and single-label names, are resolved (default systemLookup). */
  system?: LookupAll;
}

// Answers that say the name has no address in DNS, as opposed to DNS not answering.
const UNKNOWN_NAME = new Set(["ENOTFOUND", "ENODATA"]);
// getaddrinfo calls in flight at once, over all names: the fallback path can then hold at most
// these of libuv's threads, however many names a tenant makes fail over to it.
const SYSTEM_LOOKUPS_AT_ONCE = 2;
// The code a failed lookup carries, by c-ares code (error-text names each); any other becomes
// EAI_AGAIN, so that c-ares's ECONNREFUSED (no nameserver reachable) is not read as the receiver
// refusing the connection. A name DNS cannot even ask about (a label over 63 bytes) does not exist.
const REPORTED_AS: Record<string, string> = {
  ETIMEOUT: "ETIMEOUT",
  ESERVFAIL: "ESERVFAIL",
  EREFUSED: "EREFUSED",
  ENOTFOUND: "ENOTFOUND",
  EBADNAME: "ENOTFOUND",
};

/**
 * Resolves delivery hostnames without holding a libuv threadpool thread while DNS answers.
 *
 * Node's dns.lookup runs getaddrinfo on the threadpool (4 threads by default), and a lookup whose
 * nameserver never answers holds its thread for the resolver's whole timeout. A tenant's endpoint
 * on such a name would, with a few attempts in flight, hold every thread: every other endpoint's
 * new connections, on any name, would wait behind it and time out. That breaks "a dead endpoint
 * holds only its own concurrency". So names are asked of DNS through c-ares (asynchronous, on the
 * event loop, A and AAAA at once), and only a name DNS does not know (a definite answer, fast) or
 * a single-label name goes on to getaddrinfo, for /etc/hosts and search domains. Concurrent
 * lookups of one name share one resolution, and at most SYSTEM_LOOKUPS_AT_ONCE getaddrinfo calls
 * run at once, so that path holds at most that many threads.
 */
export function createDnsLookup(options: DnsLookupOptions): LookupAll {
  // DNS gets 3/5 of the deadline, so dead nameservers fail the attempt as a DNS timeout, not as a
  // receiver that never answered. c-ares's own timing only roughly follows its options (it goes
  // through every nameserver on each try, with a floor per query: three dead ones took 2.1 s
  // with 66 ms tries), so the share is enforced here as well; it cannot cancel one query.
  const dnsDeadlineMs = (options.deadlineMs * 3) / 5;
  const servers = options.servers ?? dns.getServers();
  const perTry = options.deadlineMs / 5 / Math.max(1, servers.length);
  const resolver = new dns.Resolver({ timeout: Math.max(50, Math.floor(perTry)), tries: 2 });
  if (options.servers) resolver.setServers([...options.servers]);
  const system = limited(options.system ?? systemLookup, SYSTEM_LOOKUPS_AT_ONCE);
  const aaaaGraceMs = options.aaaaGraceMs ?? 50;
  const inFlight = new Map<string, Promise<readonly LookupAddress[]>>();

  async function resolve(hostname: string): Promise<readonly LookupAddress[]> {
    // "localhost", or a short name meant for the search domains: the system's to answer.
    // One deadline for the whole lookup: DNS first, then any wait for getaddrinfo.
    const giveUpAt = Date.now() + dnsDeadlineMs;
    if (!hostname.replace(/\.$/, "").includes(".")) return system(hostname, giveUpAt);
    const [v4, v6] = await within(
      dnsDeadlineMs,
      addressesOfBothFamilies(resolver.resolve4(hostname), resolver.resolve6(hostname), aaaaGraceMs),
      () => {
        throw dnsError(hostname, "ETIMEOUT");
      },
    );
    const addresses: LookupAddress[] = [];
    if (v4.status === "fulfilled") for (const address of v4.value) addresses.push({ address, family: 4 });
    if (v6.status === "fulfilled") for (const address of v6.value) addresses.push({ address, family: 6 });
    if (addresses.length > 0) return addresses;
    const failure = [v4, v6].find(
      (r): r is PromiseRejectedResult => r.status === "rejected" && !UNKNOWN_NAME.has(codeOf(r.reason) ?? ""),
    );
    if (failure === undefined) return system(hostname, giveUpAt); // DNS does not know it: /etc/hosts may
    throw dnsError(hostname, codeOf(failure.reason) ?? "");
  }

  return (hostname) => {
    const key = hostname.toLowerCase();
    let pending = inFlight.get(key);
    if (pending === undefined) {
      pending = resolve(hostname).finally(() => inFlight.delete(key));
      inFlight.set(key, pending);
    }
    return pending;
  };
}

const LATE: Settled = { status: "rejected", reason: "no answer within the grace" };

type Settled = PromiseSettledResult<string[]>;

/**
 * The A and AAAA answers. Once A has found addresses, AAAA gets graceMs more (RFC 8305's
 * Resolution Delay), so a nameserver that drops AAAA queries does not hold up a name with A
 * records; getaddrinfo would wait for both.
 */
async function addressesOfBothFamilies(
  v4Query: Promise<string[]>,
  v6Query: Promise<string[]>,
  graceMs: number,
): Promise<[Settled, Settled]> {
  const v6 = settled(v6Query);
  const v4 = await settled(v4Query);
  if (v4.status === "rejected" || v4.value.length === 0) return [v4, await v6];
  return [v4, await within(graceMs, v6, () => LATE)];
}

/** The promise's outcome or, if it has none within ms, onLate's (what it returns or throws). */
async function within<T>(ms: number, promise: Promise<T>, onLate: () => T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<T>((resolve, reject) => {
    timer = setTimeout(() => {
      try {
        resolve(onLate());
      } catch (error) {
        reject(error);
      }
    }, ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

function settled(query: Promise<string[]>): Promise<Settled> {
  return query.then(
    (value) => ({ status: "fulfilled", value }),
    (reason: unknown) => ({ status: "rejected", reason }),
  );
}

/**
 * The lookup, with at most `max` calls in flight at once; the others wait their turn, in order,
 * until their lookup's giveUpAt, and then fail as a DNS timeout. A wait that ended is never
 * started later: its attempt is over, and names that hang getaddrinfo (one tenant's) would
 * otherwise queue up work nobody wants ahead of every other tenant's names.
 */
function limited(
  lookup: LookupAll,
  max: number,
): (hostname: string, giveUpAt: number) => Promise<readonly LookupAddress[]> {
  let running = 0;
  const waiting = new Set<() => void>(); // insertion order: first come, first served
  const handOver = () => {
    const [next] = waiting;
    if (next === undefined) return;
    waiting.delete(next);
    running += 1; // counted here, so no newcomer takes the slot before the waiter runs
    next();
  };
  const turn = (hostname: string, giveUpAt: number) =>
    new Promise<void>((resolve, reject) => {
      const go = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        waiting.delete(go);
        reject(dnsError(hostname, "ETIMEOUT"));
      }, giveUpAt - Date.now());
      waiting.add(go);
    });
  return async (hostname, giveUpAt) => {
    if (running < max) running += 1;
    else await turn(hostname, giveUpAt);
    try {
      return await lookup(hostname);
    } finally {
      running -= 1;
      handOver();
    }
  };
}

function dnsError(hostname: string, cause: string): NodeJS.ErrnoException {
  const code = REPORTED_AS[cause] ?? "EAI_AGAIN";
  return Object.assign(new Error(`DNS lookup of ${hostname} failed: ${cause || "unknown error"}`), {
    code,
    hostname,
  });
}
