import { type Client, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { loadConfig } from "@hookline/config";
import { AttemptLogService, EmitService, EndpointService } from "@hookline/contracts";
import { createLogger } from "@hookline/runtime";
import { createTestBackend, type TestBackend } from "@hookline/testkit";
import { type Service, startService } from "./service.js";

export interface TestService {
  service: Service;
  backend: TestBackend;
  endpoints: Client<typeof EndpointService>;
  emit: Client<typeof EmitService>;
  log: Client<typeof AttemptLogService>;
  close(): Promise<void>;
}

/** Starts api + worker in this process on a fresh backend of this run's kind, with a gRPC client. */
export async function startTestService(env: Record<string, string> = {}): Promise<TestService> {
  const backend = await createTestBackend();
  const config = loadConfig({
    HOOKLINE_API_ADDR: "127.0.0.1:0",
    HOOKLINE_QUEUE_POLL_INTERVAL: "20ms",
    ...backend.env,
    ...env,
  });
  const lines: string[] = [];
  const service = await startService(
    config,
    createLogger("test", (line) => lines.push(line)),
  );
  const transport = createGrpcTransport({ baseUrl: `http://${service.address}` });
  return {
    service,
    backend,
    endpoints: createClient(EndpointService, transport),
    emit: createClient(EmitService, transport),
    log: createClient(AttemptLogService, transport),
    async close() {
      await service.close();
      await backend.dispose();
    },
  };
}
