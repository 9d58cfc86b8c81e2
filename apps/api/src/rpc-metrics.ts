import { Code, ConnectError, createContextKey, type Interceptor } from "@connectrpc/connect";
import { codeToString } from "@connectrpc/connect/protocol-connect";
import type { HooklineMetrics } from "@hookline/metrics";
import type { RefusalListener } from "./grpc-unary.js";

/**
 * When the call reached the api (performance.now()), set by the request handler as it reads the
 * headers, so the time to read the body counts: a caller waits for that too.
 */
export const arrivedAtKey = createContextKey<number | undefined>(undefined, {
  description: "when the call reached the api",
});

type Rpc = Pick<HooklineMetrics, "rpcHandled" | "rpcHandling">;

/**
 * Counts every RPC a service answered, by method and status code (an error no interceptor made
 * a ConnectError is sent as internal), and times the unary ones until the service returned. Listed
 * first, so it sees the codes the other interceptors settled on. A stream is counted when it ends.
 * A call whose signal was aborted (its caller left, its deadline passed) counts as that
 * (`canceled`, `deadline_exceeded`), whatever the implementation did after.
 */
export function rpcMetricsInterceptor(metrics: Rpc): Interceptor {
  return (next) => async (request) => {
    const startedAt = request.contextValues.get(arrivedAtKey) ?? performance.now();
    const method = `${request.service.typeName}/${request.method.name}`;
    const handled = (outcome: Outcome) => {
      metrics.rpcHandled.inc({ method, code: codeTold(outcome, request.signal) });
      if (!request.stream) metrics.rpcHandling.observe({ method }, (performance.now() - startedAt) / 1000);
    };
    let response: Awaited<ReturnType<typeof next>>;
    try {
      response = await next(request);
    } catch (error) {
      handled({ error });
      throw error;
    }
    if (!response.stream) {
      handled("ok");
      return response;
    }
    return { ...response, message: untilEnd(response.message, handled) };
  };
}

/**
 * Counts a call refused from its headers (a missing or unknown token), which never reaches the
 * interceptor, so that token guessing shows beside the calls the services answered.
 */
export function countRefused(metrics: Rpc): RefusalListener {
  return (method, error) => metrics.rpcHandled.inc({ method, code: codeToString(error.code) });
}

type Outcome = "ok" | { error: unknown };

async function* untilEnd<T>(
  messages: AsyncIterable<T>,
  ended: (outcome: Outcome) => void,
): AsyncGenerator<T> {
  let outcome: Outcome = "ok";
  try {
    yield* messages;
  } catch (error) {
    outcome = { error };
    throw error;
  } finally {
    ended(outcome);
  }
}

function codeTold(outcome: Outcome, signal: AbortSignal): string {
  // The reason is a ConnectError (a reset stream, a deadline) or, over HTTP/1.1, an AbortError,
  // which ConnectError.from reads as canceled. An implementation that stops on the abort may
  // throw anything (a cancelled query, say) or end cleanly; the abort is what ended the call.
  if (signal.aborted) return codeToString(ConnectError.from(signal.reason).code);
  if (outcome === "ok") return "ok";
  // An error no interceptor made a ConnectError is sent as internal.
  return codeToString(outcome.error instanceof ConnectError ? outcome.error.code : Code.Internal);
}
