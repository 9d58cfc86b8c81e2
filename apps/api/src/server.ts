import http from "node:http";
import http2 from "node:http2";
import type net from "node:net";
import type { ConnectRouter, Interceptor } from "@connectrpc/connect";
import type { ConnectionLimits } from "@hookline/config";
import type { Authenticator } from "./auth.js";
import { createFrontDoor } from "./front-door.js";
import { withReadableGrpcMessages } from "./grpc-message.js";
import type { RefusalListener } from "./grpc-unary.js";
import { createRequestHandler } from "./request-handler.js";
import { type StaticSite, serveStatic } from "./static-site.js";

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
  /** The same for a JSON body, whose escapes make the same message longer. */
  jsonReadMaxBytes: number;
  /** Who is calling, decided from the headers before any body is read. */
  authenticate: Authenticator;
  onRefused?: RefusalListener;
  /** Connection, handshake, idle and HTTP/2 limits. */
  limits: ConnectionLimits;
  /** The web console, served over HTTP/1.1 beside the RPCs; undefined serves none. */
  site?: StaticSite;
}

/**
 * Serves gRPC (HTTP/2), and Connect JSON and gRPC-Web (HTTP/1.1 or HTTP/2), on one port: a plain
 * TCP listener (the front door, which also enforces the connection limits) reads the first bytes
 * of each connection and hands it to the matching server.
 */
export async function serve(options: ServeOptions): Promise<ListeningServer> {
  const handler = withReadableGrpcMessages(createRequestHandler(options));
  const h2 = http2.createServer(
    {
      settings: {
        maxConcurrentStreams: options.limits.maxConcurrentStreams,
        maxHeaderListSize: options.limits.maxHeaderBytes,
      },
    },
    handler,
  );
  const site = options.site;
  const h1 = http.createServer({ maxHeaderSize: options.limits.maxHeaderBytes }, (req, res) => {
    if (!site) return handler(req, res);
    serveStatic(site, req, res).then(
      (served) => served || handler(req, res),
      () => res.writeHead(500).end(),
    );
  });
  const { server: front, connections: sockets, sessions } = createFrontDoor(h1, h2, options.limits);

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
