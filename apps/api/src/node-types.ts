import type { connectNodeAdapter } from "@connectrpc/connect-node";

type NodeHandler = ReturnType<typeof connectNodeAdapter>;
/** A Node HTTP/1.1 or HTTP/2 server request, as Connect's Node adapter takes it. */
export type NodeServerRequest = Parameters<NodeHandler>[0];
/** A Node HTTP/1.1 or HTTP/2 server response, as Connect's Node adapter takes it. */
export type NodeServerResponse = Parameters<NodeHandler>[1];
