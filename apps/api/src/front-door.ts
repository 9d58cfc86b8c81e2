import type http from "node:http";
import type http2 from "node:http2";
import net from "node:net";
import type { ConnectionLimits } from "@hookline/config";

const HTTP2_PREFACE = Buffer.from("PRI * HTTP/2.0");

/** One accepted connection and what it is doing. */
interface Connection {
  socket: net.Socket;
  timer: NodeJS.Timeout | undefined;
  /** Requests (HTTP/1.1) or streams (HTTP/2) in progress. */
  active: number;
  session?: http2.ServerHttp2Session;
}

/**
 * The TCP listener in front of the HTTP/1.1 and HTTP/2 servers: it reads the first bytes of each
 * connection and hands it to the matching server. Because those servers never listen themselves,
 * Node's own header and request timeouts never start; the limits are enforced here instead:
 *
 * - at most `maxConnections` open at once (more are closed as they arrive);
 * - a new connection must complete its first HTTP/1.1 request, or its HTTP/2 preface and settings,
 *   within `handshakeTimeoutMs`, however slowly it keeps sending (slowloris);
 * - a connection with no request or stream in progress is closed after `idleTimeoutMs` (a
 *   WatchAttempts stream that waits for attempts is in progress, and stays).
 */
export function createFrontDoor(
  h1: http.Server,
  h2: http2.Http2Server,
  limits: ConnectionLimits,
): { server: net.Server; connections: Set<net.Socket>; sessions: Set<http2.ServerHttp2Session> } {
  const bySocket = new WeakMap<net.Socket, Connection>();
  const connections = new Set<net.Socket>();
  const sessions = new Set<http2.ServerHttp2Session>();
  let handingOver: Connection | undefined;

  const arm = (conn: Connection, ms: number, onExpiry: () => void) => {
    clearTimeout(conn.timer);
    conn.timer = setTimeout(onExpiry, ms);
    conn.timer.unref();
  };
  const disarm = (conn: Connection) => {
    clearTimeout(conn.timer);
    conn.timer = undefined;
  };
  const closeIdle = (conn: Connection) => () => {
    if (conn.active > 0) return;
    if (conn.session) {
      conn.session.close();
      // A peer that ignores GOAWAY is cut after a moment.
      setTimeout(() => conn.socket.destroy(), 1000).unref();
    } else {
      conn.socket.destroy();
    }
  };
  const idleFrom = (conn: Connection) => {
    if (conn.active === 0) arm(conn, limits.idleTimeoutMs, closeIdle(conn));
  };

  h1.on("request", (req: http.IncomingMessage, res: http.ServerResponse) => {
    const conn = bySocket.get(req.socket);
    if (!conn) return;
    conn.active += 1;
    disarm(conn);
    res.once("close", () => {
      conn.active -= 1;
      idleFrom(conn);
    });
  });
  h2.on("session", (session) => {
    const conn = handingOver;
    sessions.add(session);
    session.on("close", () => sessions.delete(session));
    if (!conn) return;
    conn.session = session;
    // The client's SETTINGS complete its side of the HTTP/2 handshake.
    session.once("remoteSettings", () => idleFrom(conn));
    session.on("stream", (stream) => {
      conn.active += 1;
      disarm(conn);
      stream.once("close", () => {
        conn.active -= 1;
        idleFrom(conn);
      });
    });
  });

  const server = net.createServer((socket) => {
    const conn: Connection = { socket, timer: undefined, active: 0 };
    bySocket.set(socket, conn);
    connections.add(socket);
    arm(conn, limits.handshakeTimeoutMs, () => socket.destroy());
    socket.on("close", () => {
      disarm(conn);
      connections.delete(socket);
    });
    socket.on("error", () => socket.destroy());
    socket.once("readable", () => {
      const head = socket.read(HTTP2_PREFACE.length) ?? socket.read();
      if (head === null) return socket.destroy();
      socket.unshift(head);
      const isHttp2 =
        head.length >= HTTP2_PREFACE.length && head.subarray(0, HTTP2_PREFACE.length).equals(HTTP2_PREFACE);
      if (!isHttp2) return void h1.emit("connection", socket);
      // The http2 server creates the session synchronously, inside this emit.
      handingOver = conn;
      try {
        h2.emit("connection", socket);
      } finally {
        handingOver = undefined;
      }
    });
  });
  // Node drops connections beyond this at accept.
  server.maxConnections = limits.maxConnections;
  // Node's HTTP/1.1 server destroys a socket on 'timeout' unless a listener claims it; the
  // timers above decide instead.
  server.on("timeout", () => {});
  return { server, connections, sessions };
}
