import { after, before } from "node:test";
import { type Client, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { loadConfig } from "@hookline/config";
import { AttemptLogService, DeliveryStatus, EmitService, EndpointService } from "@hookline/contracts";
import { createLogger } from "@hookline/runtime";
import { emitEvents } from "@hookline/store";
import {
  createTestBackend,
  eventually,
  type Receiver,
  startReceiver,
  type TestBackend,
  type TestSettings,
} from "@hookline/testkit";
import { type Service, startService } from "./service.js";

export interface TestService {
  service: Service;
  backend: TestBackend;
  endpoints: Client<typeof EndpointService>;
  emit: Client<typeof EmitService>;
  log: Client<typeof AttemptLogService>;
  /** The service's JSON log lines. */
  logLines: string[];
  close(): Promise<void>;
}

/** Starts api + worker in this process on a fresh backend of this run's kind, with a gRPC client. */
export async function startTestService(
  settings: TestSettings,
  env: Record<string, string> = {},
): Promise<TestService> {
  const backend = await createTestBackend(settings);
  const lines: string[] = [];
  let service: Service;
  try {
    const config = loadConfig({
      HOOKLINE_API_ADDR: "127.0.0.1:0",
      HOOKLINE_QUEUE_POLL_INTERVAL: "20ms",
      ...backend.env,
      ...env,
    });
    service = await startService(
      config,
      createLogger("test", (line) => lines.push(line)),
    );
  } catch (error) {
    // A service that refuses to start (a test of its refusals) leaves no database behind.
    await backend.dispose();
    throw error;
  }
  const transport = createGrpcTransport({ baseUrl: `http://${service.address}` });
  return {
    service,
    backend,
    endpoints: createClient(EndpointService, transport),
    emit: createClient(EmitService, transport),
    log: createClient(AttemptLogService, transport),
    logLines: lines,
    async close() {
      await service.close();
      await backend.dispose();
    },
  };
}

/** A service shared by one test file's tests, and the receivers they start. */
export interface SharedService {
  /** The running service (set once the file's before hook has run). */
  readonly svc: TestService;
  /** Starts a receiver that is closed with the service after the file's tests. */
  receiver(reply?: Parameters<typeof startReceiver>[0]): Promise<Receiver>;
}

/** Starts one service before a test file's tests and closes it, and every receiver, after them. */
export function sharedTestService(settings: TestSettings, env: Record<string, string> = {}): SharedService {
  let svc: TestService | undefined;
  const receivers: Receiver[] = [];
  before(async () => {
    svc = await startTestService(settings, env);
  });
  after(async () => {
    await Promise.all(receivers.map((r) => r.close()));
    await svc?.close();
  });
  return {
    get svc() {
      if (!svc) throw new Error("the service starts in the test file's before hook");
      return svc;
    },
    async receiver(reply) {
      const r = await startReceiver(reply);
      receivers.push(r);
      return r;
    },
  };
}

/** Waits until every delivery of an event is final, and returns them. */
export async function finalDeliveries(
  svc: TestService,
  tenantId: string,
  eventId: string,
  timeoutMs = 20_000,
) {
  const { deliveries } = await eventually(
    () => svc.emit.getEvent({ tenantId, eventId }),
    (r) => r.deliveries.length > 0 && r.deliveries.every((d) => d.status !== DeliveryStatus.PENDING),
    { timeoutMs },
  );
  return deliveries;
}

/** The attempts of one event to one endpoint, in order. */
export async function attemptsOf(svc: TestService, tenantId: string, eventId: string, endpointId?: string) {
  const { attempts } = await svc.log.listAttempts({
    tenantId,
    eventId,
    endpointId: endpointId ?? "",
    pageSize: 1000,
  });
  return attempts;
}

/**
 * Puts count deliveries (events tag0..tagN-1, to the tenant's endpoints) in their queues at once:
 * one transaction and one enqueue, so only the endpoint's limits pace them.
 */
export async function queueAtOnce(
  svc: TestService,
  tenantId: string,
  count: number,
  tag = "e",
): Promise<void> {
  const { store, producer } = svc.service.infra;
  const events = Array.from({ length: count }, (_, n) => ({
    tenantId,
    id: `${tag}${n}`,
    eventType: "x",
    dataJson: "{}",
  }));
  const emitted = await emitEvents(store.db, events, new Date());
  await producer.enqueue(
    emitted.flatMap((e) =>
      e.deliveries.map((d) => ({
        deliveryId: d.id,
        tenantId: d.tenantId,
        endpointId: d.endpointId,
        attemptNumber: 1,
      })),
    ),
  );
}
