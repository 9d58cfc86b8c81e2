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

/**
 * Clients that call the api serving this page (same origin), with the bearer token if any.
 * onUnauthenticated hears of every call the api refused as UNAUTHENTICATED, streams included: the
 * credentials stopped working (a link expired, its endpoint was deleted, a token was removed), which
 * no page can fix by trying again.
 */
export function createApi(token: string, onUnauthenticated: (error: ConnectError) => void = () => {}): Api {
  const auth: Interceptor = (next) => (request) => {
    if (token !== "") request.header.set("authorization", `Bearer ${token}`);
    return next(request);
  };
  const report = (error: unknown) => {
    if (error instanceof ConnectError && error.code === Code.Unauthenticated) onUnauthenticated(error);
  };
  const watch: Interceptor = (next) => async (request) => {
    try {
      const response = await next(request);
      return response.stream ? { ...response, message: reporting(response.message, report) } : response;
    } catch (error) {
      report(error);
      throw error;
    }
  };
  const transport = createConnectTransport({ baseUrl: window.location.origin, interceptors: [watch, auth] });
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
    if (isUnreachable(error)) {
      return `Hookline is unreachable or its database is down (${error.rawMessage}). Try again shortly.`;
    }
    switch (error.code) {
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

/**
 * The api answered UNAVAILABLE, or never answered: connect-web reports a fetch that failed outright
 * (connection refused or reset, offline) as UNKNOWN caused by the TypeError fetch threw.
 */
export function isUnreachable(error: unknown): boolean {
  if (!(error instanceof ConnectError)) return false;
  return error.code === Code.Unavailable || (error.code === Code.Unknown && error.cause instanceof TypeError);
}

async function* reporting<T>(messages: AsyncIterable<T>, report: (error: unknown) => void) {
  try {
    yield* messages;
  } catch (error) {
    report(error);
    throw error;
  }
}
