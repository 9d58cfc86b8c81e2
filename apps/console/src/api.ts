import { type Client, Code, ConnectError, createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import { AttemptLogService, EmitService, EndpointService, PortalService } from "@hookline/contracts";

/** Typed clients for every Hookline service the console calls, sharing one transport. */
export interface Api {
  endpoints: Client<typeof EndpointService>;
  emit: Client<typeof EmitService>;
  log: Client<typeof AttemptLogService>;
  portal: Client<typeof PortalService>;
}

/** Clients that call the api serving this page (same origin), with the bearer token if any. */
export function createApi(token: string): Api {
  const auth: Interceptor = (next) => (request) => {
    if (token !== "") request.header.set("authorization", `Bearer ${token}`);
    return next(request);
  };
  const transport = createConnectTransport({ baseUrl: window.location.origin, interceptors: [auth] });
  return {
    endpoints: createClient(EndpointService, transport),
    emit: createClient(EmitService, transport),
    log: createClient(AttemptLogService, transport),
    portal: createClient(PortalService, transport),
  };
}

/** A message a person can act on, from any error a call threw. */
export function errorText(error: unknown): string {
  if (error instanceof ConnectError) {
    switch (error.code) {
      case Code.Unavailable:
        return `Hookline is unreachable or its database is down (${error.rawMessage}). Try again shortly.`;
      case Code.Unauthenticated:
        return `Not signed in: ${error.rawMessage}.`;
      case Code.PermissionDenied:
        return `Not allowed: ${error.rawMessage}.`;
      default:
        return error.rawMessage;
    }
  }
  return error instanceof Error ? error.message : String(error);
}

export function isAuthError(error: unknown): boolean {
  return error instanceof ConnectError && error.code === Code.Unauthenticated;
}
