import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import net from "node:net";

export interface TestServer {
  url: string;
  port: number;
  /** TCP connections accepted so far. */
  connections(): number;
  close(): Promise<void>;
}

/** Where a test server listens: a loopback address (default 127.0.0.1) and a port (default any free one). */
export interface ListenOn {
  host?: string;
  port?: number;
}

/** An HTTP receiver, by default on 127.0.0.1 with an ephemeral port. */
export async function startHttpServer(handler: http.RequestListener, on: ListenOn = {}): Promise<TestServer> {
  const server = http.createServer(handler);
  const result = await listen(server, on);
  return {
    ...result,
    close: async () => {
      server.closeAllConnections();
      await result.close();
    },
  };
}

/** A raw TCP receiver, for answers no well-behaved HTTP server would give. */
export async function startTcpServer(
  onSocket: (socket: net.Socket) => void,
  on: ListenOn = {},
): Promise<TestServer> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => {});
    onSocket(socket);
  });
  const result = await listen(server, on);
  return {
    ...result,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await result.close();
    },
  };
}

/** A port on 127.0.0.1 that nothing listens on. */
export async function closedPort(): Promise<number> {
  const server = await startTcpServer(() => {});
  await server.close();
  return server.port;
}

async function listen(
  server: net.Server,
  { host = "127.0.0.1", port: wanted = 0 }: ListenOn,
): Promise<TestServer> {
  let connections = 0;
  server.on("connection", () => {
    connections++;
  });
  server.listen(wanted, host);
  await once(server, "listening"); // rejects on "error", e.g. EADDRINUSE
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}/hooks`,
    port,
    connections: () => connections,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
