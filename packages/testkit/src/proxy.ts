import { once } from "node:events";
import net from "node:net";
import type pg from "pg";

/**
 * A TCP relay a test can cut and restore, as a network failure or a server going away would: in
 * front of the api (a client's stream drops) or of the database (a process loses its store). It
 * can also freeze, as a partition or a host that died without closing anything would: connections
 * stay open and nothing reaches either side until it thaws.
 */
export interface CuttableProxy {
  /** host:port to connect to instead of the target. */
  readonly address: string;
  readonly port: number;
  /** Destroys every open connection and refuses new ones until restore(). */
  cut(): void;
  restore(): void;
  /** Resets (TCP RST) every open connection, as a peer or a middlebox that lost it would; new ones relay. */
  reset(): void;
  /** Holds every byte in either direction, on open connections and new ones, until thaw(). */
  freeze(): void;
  /** Delivers what freeze() held, in order, and relays again. */
  thaw(): void;
  close(): Promise<void>;
}

/** Starts a relay on a free loopback port to target (`host:port`, or the path of a Unix socket). */
export async function startCuttableProxy(target: string): Promise<CuttableProxy> {
  const [host = "127.0.0.1", port = "0"] = target.split(":");
  const connect = () => (target.startsWith("/") ? net.connect(target) : net.connect(Number(port), host));
  const sockets = new Set<net.Socket>();
  // What freeze() holds: bytes, and the closing of one side (a partition hides that too).
  const held: { to: net.Socket; chunk?: Buffer }[] = [];
  let cut = false;
  let frozen = false;
  const track = (socket: net.Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
  };
  const relay = (from: net.Socket, to: net.Socket) => {
    from.on("data", (chunk: Buffer) => {
      if (frozen) held.push({ to, chunk });
      else to.write(chunk);
    });
    from.on("close", () => {
      if (frozen) held.push({ to });
      else to.destroy();
    });
  };
  const server = net.createServer((client) => {
    track(client);
    if (cut) return void client.destroy();
    const upstream = connect();
    track(upstream);
    relay(client, upstream);
    relay(upstream, client);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port: own } = server.address() as net.AddressInfo;
  return {
    address: `127.0.0.1:${own}`,
    port: own,
    cut() {
      cut = true;
      held.length = 0;
      for (const socket of sockets) socket.destroy();
    },
    restore() {
      cut = false;
    },
    reset() {
      for (const socket of sockets) socket.resetAndDestroy();
    },
    freeze() {
      frozen = true;
    },
    thaw() {
      frozen = false;
      for (const { to, chunk } of held.splice(0)) {
        if (to.destroyed) continue;
        if (chunk) to.write(chunk);
        else to.destroy();
      }
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** A relay in front of a database, and the pg settings that reach that database through it. */
export async function startDatabaseProxy(
  config: pg.ClientConfig,
): Promise<{ proxy: CuttableProxy; config: pg.ClientConfig }> {
  // The embedded store listens on a Unix socket: pg's host is then the socket's directory.
  const socketDir = config.host?.startsWith("/") ? config.host : undefined;
  const url = new URL(
    config.connectionString ??
      `postgres://${config.user ?? "postgres"}@${socketDir ? "127.0.0.1" : (config.host ?? "127.0.0.1")}:${config.port ?? 5432}/${config.database ?? "postgres"}`,
  );
  const proxy = await startCuttableProxy(
    socketDir ? `${socketDir}/.s.PGSQL.${config.port ?? 5432}` : `${url.hostname}:${url.port || 5432}`,
  );
  url.hostname = "127.0.0.1";
  url.port = String(proxy.port);
  return { proxy, config: { connectionString: url.toString() } };
}
