import type { ConnectRouter } from "@connectrpc/connect";
import type { ConnectionLimits } from "@hookline/config";
import { AttemptLogService, EmitService, EndpointService, PortalService } from "@hookline/contracts";
import type { HooklineMetrics } from "@hookline/metrics";
import { type ApiToken, createAuthenticator } from "./auth.js";
import type { ApiDeps } from "./deps.js";
import { registerEcosystem } from "./ecosystem/index.js";
import { errorMappingInterceptor } from "./errors.js";
import type { RefusalListener } from "./grpc-unary.js";
import { linkEndpointInterceptor } from "./link-endpoint.js";
import { logRefusals } from "./refusal-log.js";
import { countRefused, rpcMetricsInterceptor } from "./rpc-metrics.js";
import { type ListeningServer, serve } from "./server.js";
import { attemptLogService } from "./services/attempt-log-service.js";
import { emitService } from "./services/emit-service.js";
import { endpointService } from "./services/endpoint-service.js";
import { portalService } from "./services/portal-service.js";

/** Registers every Hookline service, then gRPC health and reflection, on a Connect router. */
export function routes(deps: ApiDeps) {
  return (router: ConnectRouter) => {
    router.service(EndpointService, endpointService(deps));
    router.service(EmitService, emitService(deps));
    router.service(AttemptLogService, attemptLogService(deps));
    router.service(PortalService, portalService(deps));
    // Health and reflection describe the services above, so they come last.
    registerEcosystem(router, { checkStore: deps.checkStore, healthWatches: deps.healthWatches });
  };
}

export interface ApiServerOptions {
  host: string;
  port: number;
  /** Empty: no authentication (loopback, or HOOKLINE_INSECURE_NO_AUTH). */
  tokens: readonly ApiToken[];
  /** With no tokens, answer calls that name any host, not only a loopback one (HOOKLINE_INSECURE_NO_AUTH). */
  anyHost?: boolean;
  /** Connection, handshake, idle and HTTP/2 limits of the listener. */
  limits: ConnectionLimits;
  /** Directory of the built web console, served under /ui/; undefined serves none. */
  consoleDir?: string;
  /** Where RPCs are counted and timed; undefined counts none. */
  metrics?: Pick<HooklineMetrics, "rpcHandled" | "rpcHandling">;
}

/** Starts the api on host:port (gRPC, gRPC-Web and Connect JSON on the same port). */
export function startApiServer(deps: ApiDeps, options: ApiServerOptions): Promise<ListeningServer> {
  return serve({
    host: options.host,
    port: options.port,
    routes: routes(deps),
    // Metrics first: it sees the codes errorMappingInterceptor settles on.
    interceptors: [
      ...(options.metrics ? [rpcMetricsInterceptor(options.metrics)] : []),
      errorMappingInterceptor(deps.log),
      linkEndpointInterceptor(deps.db),
    ],
    authenticate: createAuthenticator(
      options.tokens,
      { key: deps.portalKey, now: deps.now },
      { anyHost: options.anyHost === true },
    ),
    onRefused: bothListeners(logRefusals(deps.log), options.metrics && countRefused(options.metrics)),
    limits: options.limits,
    // Leaves room for the largest data_json plus the envelope of the request.
    readMaxBytes: deps.maxDataBytes + 64 * 1024,
    // In JSON, data_json is a string whose escapes take up to six bytes for one: \u007f from
    // Python's json.dumps, \u003c for every < from Go's encoding/json.
    jsonReadMaxBytes: 6 * deps.maxDataBytes + 64 * 1024,
    ...(options.consoleDir && { site: { prefix: "/ui/", dir: options.consoleDir } }),
  });
}

function bothListeners(first: RefusalListener, second: RefusalListener | undefined): RefusalListener {
  if (!second) return first;
  return (method, error, peer) => {
    first(method, error, peer);
    second(method, error, peer);
  };
}
