import type http2 from "node:http2";
import type { DescMethodUnary, DescService } from "@bufbuild/protobuf";
import type { ContextValues, HandlerContext } from "@connectrpc/connect";

/** A HandlerContext that says which of its response headers and trailers were touched. */
export interface LazyContext extends HandlerContext {
  /** The response headers and trailers, only if the implementation touched them. */
  readonly touched: { header?: Headers; trailer?: Headers };
}

/** Connect's HandlerContext, with its Headers made only when the implementation reads them. */
export function handlerContext(
  route: { service: DescService; method: DescMethodUnary },
  req: http2.Http2ServerRequest,
  values: ContextValues,
  signal: AbortSignal,
  deadline: number | undefined,
): LazyContext {
  let requestHeader: Headers | undefined;
  const touched: { header?: Headers; trailer?: Headers } = {};
  return {
    method: route.method,
    service: route.service,
    signal,
    timeoutMs: () => (deadline === undefined ? undefined : deadline - Date.now()),
    requestMethod: "POST",
    protocolName: "grpc",
    values,
    touched,
    get url() {
      return `${req.scheme ?? "http"}://${req.authority}${req.url}`;
    },
    get requestHeader() {
      requestHeader ??= webHeaders(req.headers);
      return requestHeader;
    },
    get responseHeader() {
      touched.header ??= new Headers();
      return touched.header;
    },
    get responseTrailer() {
      touched.trailer ??= new Headers();
      return touched.trailer;
    },
  };
}

function webHeaders(headers: http2.IncomingHttpHeaders): Headers {
  const out = new Headers();
  for (const [name, value] of Object.entries(headers)) {
    if (name.startsWith(":") || value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) out.append(name, one);
  }
  return out;
}
