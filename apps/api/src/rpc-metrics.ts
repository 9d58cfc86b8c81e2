import { Code, ConnectError, createContextKey, type Interceptor } from "@connectrpc/connect";
import { codeToString } from "@connectrpc/connect/protocol-connect";
import type { HooklineMetrics } from "@hookline/metrics";

/**
 * When the call reached the api (performance.now()), set by the request handler as it reads the
 * headers, so the time to read the body counts: a caller waits for that too.
 */
export const arrivedAtKey = createContextKey<number | undefined>(undefined, {
  description: "when the call reached the api",
});

type Rpc = Pick<HooklineMetrics, "rpcHandled" | "rpcHandling">;

/**
 * Counts every RPC a service answered, by method and the status code it answered with, and times
 * the unary ones until the service returned. Listed first, so it sees the codes the other
 * interceptors settled on. A stream is counted when it ends; one ended by its caller leaving or
 * its deadline passing carries the code of that (`canceled`, `deadline_exceeded`).
 */
export function rpcMetricsInterceptor(metrics: Rpc): Interceptor {
  return (next) => async (request) => {
    const startedAt = request.contextValues.get(arrivedAtKey) ?? performance.now();
    const method = `${request.service.typeName}/${request.method.name}`;
    const handled = (code: string) => {
      metrics.rpcHandled.inc({ method, code });
      if (!request.stream) metrics.rpcHandling.observe({ method }, (performance.now() - startedAt) / 1000);
    };
    let response: Awaited<ReturnType<typeof next>>;
    try {
      response = await next(request);
    } catch (error) {
      handled(codeOfThrown(error));
      throw error;
    }
    if (!response.stream) {
      handled("ok");
      return response;
    }
    return { ...response, message: untilEnd(response.message, request.signal, handled) };
  };
}

async function* untilEnd<T>(
  messages: AsyncIterable<T>,
  signal: AbortSignal,
  ended: (code: string) => void,
): AsyncGenerator<T> {
  let code = "ok";
  try {
    yield* messages;
  } catch (error) {
    code = codeOfThrown(error);
    throw error;
  } finally {
    // The reason is a ConnectError (a reset stream, a deadline) or, over HTTP/1.1, an AbortError,
    // which ConnectError.from reads as canceled.
    ended(code === "ok" && signal.aborted ? codeToString(ConnectError.from(signal.reason).code) : code);
  }
}

/** What the caller is told: an error no interceptor made a ConnectError is sent as internal. */
function codeOfThrown(error: unknown): string {
  return codeToString(error instanceof ConnectError ? error.code : Code.Internal);
}
