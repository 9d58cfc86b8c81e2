import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import type { ConnectRouter, Interceptor } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { type StaticSite, serveStatic } from "./static-site.js";

const HTTP2_PREFACE = Buffer.from("PRI * HTTP/2.0");

export interface ListeningServer {
  /** The address actually bound (port 0 picks a free one). */
  readonly host: string;
  readonly port: number;
  close(): Promise<void>;
}

export interface ServeOptions {
  host: string;
  port: number;
  routes: (router: ConnectRouter) => void;
  interceptors: Interceptor[];
  /** Largest request message accepted, in bytes. */
  readMaxBytes: number;
  /** The web console, served over HTTP/1.1 beside the RPCs; undefined serves none. */
  site?: StaticSite;
}

/**
 * Serves gRPC (HTTP/2), and Connect JSON and gRPC-Web (HTTP/1.1 or HTTP/2), on one port: a plain
 * TCP listener reads the first bytes of each connection and hands it to the matching server.
 */
export async function serve(options: ServeOptions): Promise<ListeningServer> {
  const handler = connectNodeAdapter({
    routes: options.routes,
    interceptors: options.interceptors,
    readMaxBytes: options.readMaxBytes,
    // Proto3 JSON's default: a misspelt field or enum name is an error, not silently dropped.
    jsonOptions: { ignoreUnknownFields: false },
  });
  const h2 = http2.createServer(handler);
  const site = options.site;
  const h1 = http.createServer((req, res) => {
    if (!site) return handler(req, res);
    serveStatic(site, req, res).then(
      (served) => served || handler(req, res),
      () => res.writeHead(500).end(),
    );
  });
  const sockets = new Set<net.Socket>();
  const sessions = new Set<http2.ServerHttp2Session>();
  h2.on("session", (session) => {
    sessions.add(session);
    session.on("close", () => sessions.delete(session));
  });

  const front = net.createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.once("readable", () => {
      const head = socket.read(HTTP2_PREFACE.length) ?? socket.read();
      if (head === null) return socket.destroy();
      socket.unshift(head);
      const isHttp2 =
        head.length >= HTTP2_PREFACE.length && head.subarray(0, HTTP2_PREFACE.length).equals(HTTP2_PREFACE);
      (isHttp2 ? h2 : h1).emit("connection", socket);
    });
    socket.on("error", () => socket.destroy());
  });

  await new Promise<void>((resolve, reject) => {
    front.once("error", reject);
    front.listen(options.port, options.host, () => resolve());
  });
  const address = front.address() as net.AddressInfo;
  return {
    host: options.host,
    port: address.port,
    async close() {
      const closed = new Promise<void>((resolve) => front.close(() => resolve()));
      for (const session of sessions) session.close();
      h1.closeIdleConnections();
      // Give in-flight calls a moment, then cut what is left so shutdown is bounded.
      const deadline = setTimeout(() => {
        for (const socket of sockets) socket.destroy();
      }, 2000);
      await closed;
      clearTimeout(deadline);
    },
  };
}
