import { type Receiver, type ReceiverReply, startReceiver } from "@hookline/testkit";
import { Webhook } from "standardwebhooks";

/** The demo's endpoints, each with how its receiver answers its nth request (1-based). */
export const BEHAVIOURS: Record<string, { says: string; reply: (n: number) => ReceiverReply }> = {
  ep_a: { says: "healthy: 200", reply: () => ({ status: 200, body: "ok" }) },
  ep_b: {
    says: "503 twice, then 200",
    reply: (n) => (n <= 2 ? { status: 503, body: "busy" } : { status: 200, body: "ok" }),
  },
  ep_c: { says: "never answers", reply: () => "hang" },
  ep_d: { says: "410 Gone", reply: () => ({ status: 410, body: "gone" }) },
};

/** What one receiver saw. */
export interface ReceiverTally {
  endpoint: string;
  requests: number;
  /** Requests whose signature verifies with the reference library under the endpoint's secret. */
  verified: number;
  webhookIds: string[];
}

/** One local receiver per demo endpoint, keyed by endpoint id. */
export interface DemoReceivers {
  readonly urls: ReadonlyMap<string, string>;
  /** Counts and verifies what arrived; call it once the service has stopped, so nothing more comes. */
  tally(secrets: ReadonlyMap<string, string>): ReceiverTally[];
  close(): Promise<void>;
}

export async function startDemoReceivers(): Promise<DemoReceivers> {
  const receivers = new Map<string, Receiver>();
  try {
    for (const [endpoint, behaviour] of Object.entries(BEHAVIOURS)) {
      receivers.set(endpoint, await startReceiver((_request, n) => behaviour.reply(n)));
    }
  } catch (error) {
    await Promise.all([...receivers.values()].map((r) => r.close()));
    throw error;
  }
  return {
    urls: new Map([...receivers].map(([endpoint, r]) => [endpoint, r.url])),
    tally: (secrets) =>
      [...receivers].map(([endpoint, r]) => {
        const secret = secrets.get(endpoint);
        const webhook = secret ? new Webhook(secret) : undefined;
        const verified = r.requests.filter((request) => {
          try {
            webhook?.verify(request.body, request.headers as Record<string, string>);
            return webhook !== undefined;
          } catch {
            return false;
          }
        }).length;
        const ids = r.requests.map((request) => String(request.headers["webhook-id"] ?? ""));
        return { endpoint, requests: r.requests.length, verified, webhookIds: ids };
      }),
    close: async () => {
      await Promise.all([...receivers.values()].map((r) => r.close()));
    },
  };
}
