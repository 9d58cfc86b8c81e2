import { once } from "node:events";
import net from "node:net";

// Linux hands out local ports for outgoing connections from 32768–60999. A port the OS picked
// with listen(0) comes from that same range, so between our check and the moment another process
// binds it (an api started later, a PostgreSQL restarted on the same port) any outgoing
// connection on the machine may take it: EADDRINUSE, seen once in the fault suite. Ports below
// the range are only ever taken by a listener.
const FIRST = 20_000;
const LAST = 32_000;
const TRIES = 50;

/** A loopback port nothing listens on now, outside the range outgoing connections draw from. */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < TRIES; attempt += 1) {
    const port = FIRST + Math.floor(Math.random() * (LAST - FIRST + 1));
    if (await canListen(port)) return port;
  }
  throw new Error(`no free loopback port in ${FIRST}–${LAST} after ${TRIES} tries`);
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
