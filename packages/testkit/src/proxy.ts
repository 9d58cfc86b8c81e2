import { once } from "node:events";
import net from "node:net";
import type pg from "pg";

/**
 * A TCP relay a test can cut and restore, as a network failure or a server going away would: in
 * front of the api (a client's stream drops) or of the database (a process loses its store).
 */
export interface CuttableProxy {
  /** host:port to connect to instead of the target. */
  readonly address: string;
  readonly port: number;
  /** Destroys every open connection and refuses new ones until restore(). */
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

/** Starts a relay on a free loopback port to target (`host:port`, or the path of a Unix socket). */
export async function startCuttableProxy(target: string): Promise<CuttableProxy> {
  const [host = "127.0.0.1", port = "0"] = target.split(":");
  const connect = () => (target.startsWith("/") ? net.connect(target) : net.connect(Number(port), host));
  const sockets = new Set<net.Socket>();
  let cut = false;
  const track = (socket: net.Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
  };
  const server = net.createServer((client) => {
    track(client);
    if (cut) return void client.destroy();
    const upstream = connect();
    track(upstream);
    client.pipe(upstream).pipe(client);
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port: own } = server.address() as net.AddressInfo;
  return {
    address: `127.0.0.1:${own}`,
    port: own,
    cut() {
      cut = true;
      for (const socket of sockets) socket.destroy();
    },
    restore() {
      cut = false;
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
