import { once } from "node:events";
import { readFileSync } from "node:fs";
import net from "node:net";

// Linux hands out local ports for outgoing connections from ip_local_port_range (32768–60999 by
// default). A port the OS picked with listen(0) comes from that same range, so between our check
// and the moment another process binds it (an api started later, a PostgreSQL restarted on the
// same port) any outgoing connection on the machine may take it: EADDRINUSE, seen once in the
// fault suite. Ports below the range are only ever taken by a listener.
const SPAN = 12_000;
const TRIES = 50;

/** A loopback port nothing listens on now, below the range outgoing connections draw from. */
export async function freePort(): Promise<number> {
  const ephemeralFrom = firstEphemeralPort();
  const first = Math.max(1024, ephemeralFrom - SPAN);
  if (ephemeralFrom - first < 1000) return anyFreePort(); // a machine that left no room below
  for (let attempt = 0; attempt < TRIES; attempt += 1) {
    const port = first + Math.floor(Math.random() * (ephemeralFrom - first));
    if (await canListen(port)) return port;
  }
  throw new Error(`no free loopback port in ${first}–${ephemeralFrom - 1} after ${TRIES} tries`);
}

function firstEphemeralPort(): number {
  try {
    const [from] = readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/);
    return Number(from) || 32_768;
  } catch {
    return 32_768; // not Linux: its default
  }
}

async function canListen(port: number): Promise<boolean> {
  const server = net.createServer();
  server.listen(port, "127.0.0.1");
  try {
    await once(server, "listening");
  } catch {
    return false;
  }
  await new Promise((resolve) => server.close(resolve));
  return true;
}

async function anyFreePort(): Promise<number> {
  const server = net.createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
