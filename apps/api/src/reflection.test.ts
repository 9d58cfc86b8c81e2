import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { readTestSettings } from "@hookline/testkit";
import { PROTO_DIR, startTestApi, type TestApi, uniqueTenant } from "./test-helpers.js";

const settings = readTestSettings(process.env);

// What a reflection response looks like through @grpc/proto-loader (keepCase, oneofs).
interface ReflectionResponse {
  message_response: "list_services_response" | "file_descriptor_response" | "error_response";
  list_services_response?: { service: { name: string }[] };
  file_descriptor_response?: { file_descriptor_proto: Buffer[] };
  error_response?: { error_code: number; error_message: string };
}

type ReflectionStub = grpc.Client & {
  ServerReflectionInfo(): grpc.ClientDuplexStream<object, ReflectionResponse>;
};

/** A stock grpc-js client for grpc.reflection.<version>, as grpcurl-like tools build one. */
function reflectionClient(address: string, version: "v1" | "v1alpha"): ReflectionStub {
  const definition = protoLoader.loadSync(`grpc/reflection/${version}/reflection.proto`, {
    includeDirs: [PROTO_DIR],
    keepCase: true,
    oneofs: true,
  });
  const loaded = grpc.loadPackageDefinition(definition) as unknown as {
    grpc: { reflection: Record<string, { ServerReflection: grpc.ServiceClientConstructor }> };
  };
  const Service = loaded.grpc.reflection[version]?.ServerReflection;
  assert.ok(Service);
  return new Service(address, grpc.credentials.createInsecure()) as unknown as ReflectionStub;
}

/** Sends the requests on one stream and collects one response each. */
async function ask(client: ReflectionStub, requests: object[]): Promise<ReflectionResponse[]> {
  const call = client.ServerReflectionInfo();
  const responses: ReflectionResponse[] = [];
  const done = new Promise<void>((resolve, reject) => {
    call.on("data", (response: ReflectionResponse) => responses.push(response));
    call.on("error", reject);
    call.on("end", () => resolve());
  });
  for (const request of requests) call.write(request);
  call.end();
  await done;
  assert.equal(responses.length, requests.length);
  return responses;
}

/** FileDescriptorProtos as a serialized FileDescriptorSet (field 1, repeated). */
function descriptorSet(files: Buffer[]): Buffer {
  const parts: Buffer[] = [];
  for (const file of files) {
    const length: number[] = [];
    for (let n = file.length; ; n >>>= 7) {
      if (n < 0x80) {
        length.push(n);
        break;
      }
      length.push((n & 0x7f) | 0x80);
    }
    parts.push(Buffer.from([0x0a, ...length]), file);
  }
  return Buffer.concat(parts);
}

/** The `name` (field 1) of a serialized FileDescriptorProto; short names only. */
function fileName(bytes: Buffer): string {
  assert.equal(bytes[0], 0x0a);
  const length = bytes[1] ?? 0;
  assert.ok(length < 0x80);
  return bytes.subarray(2, 2 + length).toString();
}

const SERVICES = [
  "grpc.health.v1.Health",
  "grpc.reflection.v1.ServerReflection",
  "grpc.reflection.v1alpha.ServerReflection",
  "hookline.v1.AttemptLogService",
  "hookline.v1.EmitService",
  "hookline.v1.EndpointService",
  "hookline.v1.PortalService",
];

for (const version of ["v1", "v1alpha"] as const) {
  describe(`grpc.reflection.${version}.ServerReflection`, () => {
    let api: TestApi;
    let client: ReflectionStub;
    before(async () => {
      api = await startTestApi(settings);
      client = reflectionClient(api.address, version);
    });
    after(async () => {
      client?.close();
      await api?.close();
    });

    test("lists the Hookline, health and reflection services", async () => {
      const [listed] = await ask(client, [{ list_services: "" }]);
      assert.equal(listed?.message_response, "list_services_response");
      assert.deepEqual(listed.list_services_response?.service.map((s) => s.name).sort(), SERVICES);
    });

    test("a symbol's file comes with its imports, and a grpc-js client built from them calls the api", async () => {
      const [emit] = await ask(client, [{ file_containing_symbol: "hookline.v1.EmitService" }]);
      const files = emit?.file_descriptor_response?.file_descriptor_proto ?? [];
      assert.ok(files.map(fileName).includes("google/protobuf/timestamp.proto"), "the imports come along");
      assert.ok(files.map(fileName).includes("hookline/v1/delivery.proto"), "the imports come along");
      assert.equal(fileName(files[0] as Buffer), "hookline/v1/emit.proto", "the asked-for file comes first");

      const [endpoint] = await ask(client, [
        { file_containing_symbol: "hookline.v1.EndpointService.CreateEndpoint" },
      ]);
      // Each stream sends a file's imports again; a client keeps one copy of each file.
      const all = [
        ...new Map(
          [...files, ...(endpoint?.file_descriptor_response?.file_descriptor_proto ?? [])].map((f) => [
            fileName(f),
            f,
          ]),
        ).values(),
      ];
      const definition = protoLoader.loadFileDescriptorSetFromBuffer(descriptorSet(all), { keepCase: true });
      const hookline = (
        grpc.loadPackageDefinition(definition) as unknown as {
          hookline: { v1: Record<string, grpc.ServiceClientConstructor> };
        }
      ).hookline.v1;
      const credentials = grpc.credentials.createInsecure();
      const endpoints = new (hookline.EndpointService as grpc.ServiceClientConstructor)(
        api.address,
        credentials,
      );
      const emitter = new (hookline.EmitService as grpc.ServiceClientConstructor)(api.address, credentials);
      const unary = (stub: grpc.Client, method: string, request: object) =>
        new Promise<Record<string, unknown>>((resolve, reject) =>
          (stub as unknown as Record<string, (r: object, cb: (e: Error | null, v: unknown) => void) => void>)[
            method
          ]?.call(stub, request, (error, value) =>
            error ? reject(error) : resolve(value as Record<string, unknown>),
          ),
        );
      try {
        const tenant = uniqueTenant("reflect");
        await unary(endpoints, "CreateEndpoint", { tenant_id: tenant, url: "https://reflect.test/" });
        const emitted = await unary(emitter, "Emit", { tenant_id: tenant, event_type: "t", data_json: "{}" });
        assert.equal((emitted.delivery_ids as string[]).length, 1);
      } finally {
        endpoints.close();
        emitter.close();
      }
    });

    test("files by name, methods and nested symbols; imports already sent on the stream are not resent", async () => {
      const [byName, again, nested, method] = await ask(client, [
        { file_by_filename: "hookline/v1/attempt_log.proto" },
        { file_by_filename: "hookline/v1/emit.proto" },
        { file_containing_symbol: "grpc.health.v1.HealthCheckResponse.ServingStatus" },
        { file_containing_symbol: "grpc.reflection.v1.ServerReflection.ServerReflectionInfo" },
      ]);
      const names = (response: ReflectionResponse | undefined) =>
        response?.file_descriptor_response?.file_descriptor_proto.map(fileName);
      assert.equal(names(byName)?.[0], "hookline/v1/attempt_log.proto");
      assert.ok(names(byName)?.includes("google/protobuf/timestamp.proto"), `${names(byName)}`);
      assert.ok(names(byName)?.includes("hookline/v1/delivery.proto"), `${names(byName)}`);
      assert.deepEqual(names(again), ["hookline/v1/emit.proto"]);
      assert.deepEqual(names(nested), ["grpc/health/v1/health.proto"]);
      assert.deepEqual(names(method), ["grpc/reflection/v1/reflection.proto"]);
    });

    test("google/rpc/error_details.proto is there for decoding error details", async () => {
      const [details] = await ask(client, [{ file_containing_symbol: "google.rpc.BadRequest" }]);
      assert.deepEqual(details?.file_descriptor_response?.file_descriptor_proto.map(fileName).sort(), [
        "google/protobuf/duration.proto",
        "google/rpc/error_details.proto",
      ]);
    });

    test("unknown names answer NOT_FOUND in an error_response and the stream goes on", async () => {
      const [symbol, file, listed] = await ask(client, [
        { file_containing_symbol: "hookline.v1.Nope" },
        { file_by_filename: "nope.proto" },
        { list_services: "*" },
      ]);
      assert.equal(symbol?.error_response?.error_code, grpc.status.NOT_FOUND);
      assert.match(symbol?.error_response?.error_message ?? "", /hookline\.v1\.Nope/);
      assert.equal(file?.error_response?.error_code, grpc.status.NOT_FOUND);
      assert.equal(listed?.list_services_response?.service.length, SERVICES.length);
    });
  });
}
