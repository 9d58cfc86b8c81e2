import type { ConnectRouter } from "@connectrpc/connect";
import { Code } from "@connectrpc/connect";
import { ServerReflection, ServerReflectionV1alpha } from "@hookline/contracts";
import type { DescriptorIndex } from "./descriptor-index.js";

// v1 and v1alpha are the same messages under two package names; one handler serves both.
interface ReflectionRequest {
  host: string;
  messageRequest:
    | {
        case: "fileByFilename" | "fileContainingSymbol" | "allExtensionNumbersOfType" | "listServices";
        value: string;
      }
    | { case: "fileContainingExtension"; value: { containingType: string; extensionNumber: number } }
    | { case: undefined; value?: undefined };
}

type ReflectionAnswer =
  | { case: "fileDescriptorResponse"; value: { fileDescriptorProto: Uint8Array[] } }
  | { case: "allExtensionNumbersResponse"; value: { baseTypeName: string; extensionNumber: number[] } }
  | { case: "listServicesResponse"; value: { service: { name: string }[] } }
  | { case: "errorResponse"; value: { errorCode: number; errorMessage: string } };

/** Serves grpc.reflection.v1 and v1alpha ServerReflection (what grpcurl and Postman ask) from the index. */
export function registerReflection(router: ConnectRouter, index: DescriptorIndex): void {
  router.service(ServerReflection, { serverReflectionInfo: reflectionInfo(index) });
  router.service(ServerReflectionV1alpha, { serverReflectionInfo: reflectionInfo(index) });
}

function reflectionInfo<R extends ReflectionRequest>(index: DescriptorIndex) {
  return async function* serverReflectionInfo(requests: AsyncIterable<R>) {
    // Files this stream has already received; their bytes are not sent again as imports (as grpc-go does).
    const sent = new Set<string>();
    for await (const request of requests) {
      yield {
        validHost: request.host,
        originalRequest: request,
        messageResponse: answer(index, request, sent),
      };
    }
  };
}

function answer(index: DescriptorIndex, request: ReflectionRequest, sent: Set<string>): ReflectionAnswer {
  const { messageRequest } = request;
  switch (messageRequest.case) {
    case "listServices":
      return {
        case: "listServicesResponse",
        value: { service: index.services.map((name) => ({ name })) },
      };
    case "fileByFilename":
      return files(index.fileByName(messageRequest.value), `file "${messageRequest.value}"`);
    case "fileContainingSymbol":
      return files(index.fileContainingSymbol(messageRequest.value), `symbol "${messageRequest.value}"`);
    case "fileContainingExtension": {
      const { containingType, extensionNumber } = messageRequest.value;
      return files(
        index.fileContainingExtension(containingType, extensionNumber),
        `extension ${extensionNumber} of "${containingType}"`,
      );
    }
    case "allExtensionNumbersOfType": {
      const numbers = index.extensionNumbersOf(messageRequest.value);
      if (!numbers) return error(Code.NotFound, `type "${messageRequest.value}" not found`);
      return {
        case: "allExtensionNumbersResponse",
        value: { baseTypeName: messageRequest.value, extensionNumber: numbers },
      };
    }
    default:
      return error(Code.InvalidArgument, "the request sets none of message_request's fields");
  }

  function files(file: ReturnType<DescriptorIndex["fileByName"]>, what: string): ReflectionAnswer {
    if (!file) return error(Code.NotFound, `${what} not found`);
    const out = index.withDependencies(file, sent);
    for (const { name } of out) sent.add(name);
    return { case: "fileDescriptorResponse", value: { fileDescriptorProto: out.map(({ bytes }) => bytes) } };
  }
}

function error(code: Code, message: string): ReflectionAnswer {
  // Connect's Code enum uses gRPC's numeric status codes.
  return { case: "errorResponse", value: { errorCode: code, errorMessage: message } };
}
