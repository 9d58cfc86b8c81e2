import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { loadConfig } from "@hookline/config";
import { createLogger, type Infrastructure, openInfrastructure } from "@hookline/runtime";
import { createTestBackend, type TestBackend, type TestSettings } from "@hookline/testkit";
import { type ApiServer, startApiFromConfig } from "./compose.js";

export const PROTO_DIR = fileURLToPath(new URL("../../../proto/", import.meta.url));
export const PROTO_FILES = ["endpoint.proto", "emit.proto", "attempt_log.proto", "delivery.proto"].map(
  (name) => `hookline/v1/${name}`,
);

// Messages as @grpc/proto-loader decodes them with the options below: field names as in the
// .proto, enums as their names, int64 as strings, defaults filled in.
export interface Timestamp {
  seconds: string;
  nanos: number;
}
export interface Endpoint {
  id: string;
  tenant_id: string;
  url: string;
  description: string;
  event_types: string[];
  status: string;
  disabled_reason: string;
  secret: string;
  created_at: Timestamp | null;
  updated_at: Timestamp | null;
  /** proto3 optional: set by GetEndpoint once the queue holds a limit (with its oneof's name). */
  current_max_in_flight?: number;
  _current_max_in_flight?: string;
}
export interface Delivery {
  id: string;
  tenant_id: string;
  event_id: string;
  endpoint_id: string;
  status: string;
  attempt_count: number;
  next_attempt_at: Timestamp | null;
  created_at: Timestamp | null;
}
export interface Attempt {
  id: string;
  tenant_id: string;
  delivery_id: string;
  event_id: string;
  endpoint_id: string;
  attempt_number: number;
  response_status: number;
  response_body: string;
  error: string;
  delivery_status: string;
}
export interface Event {
  id: string;
  tenant_id: string;
  event_type: string;
  data_json: string;
  created_at: Timestamp | null;
}

/** Every RPC of the contract with the response it answers. */
export interface Responses {
  CreateEndpoint: { endpoint: Endpoint };
  GetEndpoint: { endpoint: Endpoint };
  ListEndpoints: { endpoints: Endpoint[]; next_page_token: string };
  UpdateEndpoint: { endpoint: Endpoint };
  DeleteEndpoint: Record<string, never>;
  RotateEndpointSecret: { endpoint: Endpoint };
  RecoverEndpoint: { requeued: number };
  Emit: { event_id: string; delivery_ids: string[]; duplicate: boolean };
  GetEvent: { event: Event; deliveries: Delivery[] };
  ListDeliveries: { deliveries: Delivery[]; next_page_token: string };
  ListAttempts: { attempts: Attempt[]; next_page_token: string };
  RetryDelivery: { delivery: Delivery };
}
export type Rpc = keyof Responses;

const SERVICE_OF: Record<Rpc, string> = {
  CreateEndpoint: "EndpointService",
  GetEndpoint: "EndpointService",
  ListEndpoints: "EndpointService",
  UpdateEndpoint: "EndpointService",
  DeleteEndpoint: "EndpointService",
  RotateEndpointSecret: "EndpointService",
  RecoverEndpoint: "EndpointService",
  Emit: "EmitService",
  GetEvent: "EmitService",
  ListDeliveries: "AttemptLogService",
  ListAttempts: "AttemptLogService",
  RetryDelivery: "AttemptLogService",
};

export interface TestApi {
  /** host:port the api listens on. */
  readonly address: string;
  readonly server: ApiServer;
  readonly infra: Infrastructure;
  readonly backend: TestBackend;
  /** The api's log lines (JSON). */
  readonly logLines: string[];
  /** Calls one RPC through a stock grpc-js client over a real HTTP/2 connection. */
  call<R extends Rpc>(rpc: R, request: object): Promise<Responses[R]>;
  close(): Promise<void>;
}

/** Starts infrastructure and the api on 127.0.0.1 (a free port) on this run's backend; env adds settings. */
export async function startTestApi(
  settings: TestSettings,
  env: Record<string, string> = {},
): Promise<TestApi> {
  const backend = await createTestBackend(settings);
  const config = loadConfig({ ...backend.env, HOOKLINE_API_ADDR: "127.0.0.1:0", ...env });
  const logLines: string[] = [];
  const log = createLogger("api-test", (line) => logLines.push(line));
  let infra: Infrastructure | undefined;
  let server: ApiServer | undefined;
  try {
    infra = await openInfrastructure(config, log);
    server = await startApiFromConfig(config, infra, log);
  } catch (error) {
    await infra?.close();
    await backend.dispose();
    throw error;
  }
  const address = `${server.host}:${server.port}`;
  const clients = grpcClients(address);
  const running = { infra, server };
  return {
    address,
    server,
    infra,
    backend,
    logLines,
    call(rpc, request) {
      const client = clients[SERVICE_OF[rpc]];
      assert.ok(client, `no client for ${rpc}`);
      return unary(client, rpc, request);
    },
    async close() {
      for (const client of Object.values(clients)) client.close();
      await running.server.close();
      await running.infra.close();
      await backend.dispose();
    },
  };
}

function grpcClients(address: string): Record<string, grpc.Client> {
  const definition = protoLoader.loadSync(PROTO_FILES, {
    includeDirs: [PROTO_DIR],
    keepCase: true,
    longs: String,
    enums: String,
    defaults: true,
    oneofs: true,
  });
  const loaded = grpc.loadPackageDefinition(definition) as unknown as {
    hookline: { v1: Record<string, grpc.ServiceClientConstructor> };
  };
  const credentials = grpc.credentials.createInsecure();
  const clients: Record<string, grpc.Client> = {};
  for (const name of ["EndpointService", "EmitService", "AttemptLogService"]) {
    const Service = loaded.hookline.v1[name];
    assert.ok(Service, `${name} is not in the protos`);
    clients[name] = new Service(address, credentials);
  }
  return clients;
}

type UnaryMethod = (
  request: object,
  callback: (error: grpc.ServiceError | null, response: unknown) => void,
) => void;

function unary<R extends Rpc>(client: grpc.Client, rpc: R, request: object): Promise<Responses[R]> {
  const method = (client as unknown as Record<string, UnaryMethod>)[rpc];
  assert.ok(method, `the client has no method ${rpc}`);
  return new Promise((resolve, reject) =>
    method.call(client, request, (error, response) =>
      error ? reject(error) : resolve(response as Responses[R]),
    ),
  );
}

/** Expects the call to fail with this gRPC status; returns the error for more checks. */
export async function expectStatus(
  promise: Promise<unknown>,
  code: grpc.status,
  messageIncludes?: string,
): Promise<grpc.ServiceError> {
  const error = await promise.then(
    () => assert.fail(`expected ${grpc.status[code]}, the call succeeded`),
    (caught: grpc.ServiceError) => caught,
  );
  assert.equal(
    error.code,
    code,
    `expected ${grpc.status[code]}, got ${grpc.status[error.code]}: ${error.details}`,
  );
  if (messageIncludes !== undefined) {
    assert.ok(
      error.details.includes(messageIncludes),
      `message "${error.details}" should mention "${messageIncludes}"`,
    );
  }
  assertNoInternals(error.details);
  return error;
}

/** Error text a client sees must not carry SQL, stack frames or driver names. */
export function assertNoInternals(message: string): void {
  assert.doesNotMatch(message, /\b(select|insert|update|delete)\b.*\b(from|into|set)\b/i, "SQL text leaked");
  assert.doesNotMatch(message, /\bat .+:\d+:\d+|node_modules|\.ts:\d+|\.js:\d+/, "stack text leaked");
  assert.doesNotMatch(
    message,
    /postgres|pglite|kysely|duplicate key|violates|relation "/i,
    "database text leaked",
  );
}

/** A tenant id no other test uses, so tests on one server do not see each other's rows. */
export function uniqueTenant(label: string): string {
  return `${label}-${Math.random().toString(36).slice(2, 10)}`;
}
