import { create, fromBinary, type MessageInitShape, type MessageShape, toBinary } from "@bufbuild/protobuf";
import { Client, credentials, type ServiceError } from "@grpc/grpc-js";
import { EmitService } from "@hookline/contracts";

/** An Emit request and its answer, as protobuf-es types them. */
export type EmitArgs = MessageInitShape<typeof EmitService.method.emit.input>;
export type EmitReply = MessageShape<typeof EmitService.method.emit.output>;

/** Emit over @grpc/grpc-js: the bench's producer, as a Node service would call Hookline. */
export interface GrpcEmitter {
  emit(request: EmitArgs): Promise<EmitReply>;
  close(): void;
}

const METHOD = EmitService.method.emit;
const PATH = `/${EmitService.typeName}/${METHOD.name}`;

/**
 * The load sections emit through grpc-js rather than connect-node's client: a producer is any
 * gRPC client, and connect-node's costs about 0.6 ms of CPU per call on this machine against
 * about 0.22 ms for grpc-js, which at 1,000 Emits/s would be most of a core spent by the bench
 * itself on the two cores it shares with what it measures. Messages are protobuf-es's.
 */
export function createGrpcEmitter(address: string): GrpcEmitter {
  const client = new Client(address, credentials.createInsecure());
  const serialize = (request: EmitArgs) => Buffer.from(toBinary(METHOD.input, create(METHOD.input, request)));
  const deserialize = (bytes: Buffer) => fromBinary(METHOD.output, bytes);
  return {
    emit: (request) =>
      new Promise((resolve, reject) => {
        client.makeUnaryRequest(
          PATH,
          serialize,
          deserialize,
          request,
          (error: ServiceError | null, response) =>
            error || !response ? reject(error ?? new Error("Emit answered nothing")) : resolve(response),
        );
      }),
    close: () => client.close(),
  };
}
