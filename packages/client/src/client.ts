import type http2 from "node:http2";
import { constants as http2constants } from "node:http2";
import { type Client, createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";
import { AttemptLogService, EmitService, EndpointService, PortalService } from "@hookline/contracts";

export interface HooklineClientOptions {
  /** `host:port` (plain-text HTTP/2) or an `http://` / `https://` URL. */
  address: string;
  /** Sent as `authorization: Bearer <token>` on every call. */
  token?: string | undefined;
  /** Wire protocol, both over HTTP/2: gRPC (the default) or Connect. */
  transport?: "grpc" | "connect" | undefined;
}

/** Typed clients for Hookline's services, sharing one HTTP/2 connection. */
export interface HooklineClient {
  readonly endpoints: Client<typeof EndpointService>;
  readonly emit: Client<typeof EmitService>;
  readonly log: Client<typeof AttemptLogService>;
  /** Portal links for customers, and what the calling credentials may see. */
  readonly portal: Client<typeof PortalService>;
  /** The base URL calls go to. */
  readonly baseUrl: string;
  /** Closes the HTTP/2 connection and every call still open on it. */
  close(): void;
}

/** Connects to a Hookline api (lazily: the first call opens the connection). */
export function createHooklineClient(options: HooklineClientOptions): HooklineClient {
  const baseUrl = toBaseUrl(options.address);
  // One session manager we hold on to, so close() can end the connection: an open HTTP/2 session
  // otherwise keeps the process (and a test run) alive.
  // Pings while a call is open: a long one (a large RecoverEndpoint) learns within a minute that
  // the api's host is gone, instead of waiting on a connection nothing will ever close.
  const sessionManager = new GuardedSessionManager(baseUrl, {
    pingIntervalMs: 30_000,
    pingTimeoutMs: 15_000,
  });
  const interceptors: Interceptor[] = options.token ? [bearer(options.token)] : [];
  const transport =
    options.transport === "connect"
      ? createConnectTransport({ baseUrl, httpVersion: "2", sessionManager, interceptors })
      : createGrpcTransport({ baseUrl, sessionManager, interceptors });
  return {
    endpoints: createClient(EndpointService, transport),
    emit: createClient(EmitService, transport),
    log: createClient(AttemptLogService, transport),
    portal: createClient(PortalService, transport),
    baseUrl,
    close: () => sessionManager.abort(),
  };
}

/**
 * A session manager whose HTTP/2 sessions keep an 'error' listener for as long as they live.
 * connect-node removes its own listeners when it moves on from a session, but Node can still raise
 * an error on that session afterwards (a GOAWAY on an idle connection closes it with an error that
 * Node raises only once the socket has closed): with no listener left, that error was an uncaught
 * exception and ended the whole process. The calls on a failing session fail by themselves, with
 * their own errors; this listener only keeps the late one from crashing the process.
 */
class GuardedSessionManager extends Http2SessionManager {
  private readonly guarded = new WeakSet<http2.Http2Session>();

  override async request(
    ...args: Parameters<Http2SessionManager["request"]>
  ): Promise<http2.ClientHttp2Stream> {
    const stream = await super.request(...args);
    const session = stream.session;
    // Node closes a stream without an error when its session dies under it: with NO_ERROR after
    // the server's GOAWAY (connect-node then ended neither the response nor the call, and a watch
    // waited forever), with CANCEL when the connection is reset (connect-node reported that as the
    // caller's own cancel, "canceled: http/2 stream closed with error code CANCEL"). Report both
    // as the reset they are: the call fails as unreachable, and a watch resumes. A caller's own
    // cancel also closes with CANCEL, but its session lives on.
    stream.once("close", () => {
      if (stream.readableEnded) return;
      const code = stream.rstCode;
      const sessionDied = session === undefined || session.destroyed;
      if (
        code === http2constants.NGHTTP2_NO_ERROR ||
        (code === http2constants.NGHTTP2_CANCEL && sessionDied)
      ) {
        stream.emit(
          "error",
          Object.assign(new Error("the connection closed under the call"), { code: "ECONNRESET" }),
        );
      }
    });
    if (session && !this.guarded.has(session)) {
      this.guarded.add(session);
      session.on("error", ignoreLateSessionError);
    }
    return stream;
  }
}

function ignoreLateSessionError(): void {
  // Deliberately empty: see GuardedSessionManager.
}

/** `host:port` becomes `http://host:port`; URLs pass through without a trailing slash. */
export function toBaseUrl(address: string): string {
  const trimmed = address.trim();
  if (trimmed === "") throw new Error("address is empty");
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed) ? trimmed : `http://${trimmed}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw new Error(`address "${address}" is neither host:port nor an http(s) URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new Error(`address "${address}" must use http or https`);
  }
  return url.href.replace(/\/+$/, "");
}

function bearer(token: string): Interceptor {
  return (next) => (request) => {
    request.header.set("authorization", `Bearer ${token}`);
    return next(request);
  };
}
