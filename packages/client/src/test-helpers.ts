import { once } from "node:events";
import net from "node:net";
import type { HooklineClient } from "./client.js";

/** A TCP proxy in front of the api whose connections a test can cut, as a network failure would. */
export interface CuttableProxy {
  readonly address: string;
  /** Destroys every open connection and refuses new ones until restore(). */
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startProxy(target: string): Promise<CuttableProxy> {
  const [host = "127.0.0.1", port = "0"] = target.split(":");
  const sockets = new Set<net.Socket>();
  let cut = false;
  const track = (socket: net.Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
  };
  const server = net.createServer((client) => {
    track(client);
    if (cut) return void client.destroy();
    const upstream = net.connect(Number(port), host);
    track(upstream);
    client.pipe(upstream).pipe(client);
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port: own } = server.address() as net.AddressInfo;
  return {
    address: `127.0.0.1:${own}`,
    cut() {
      cut = true;
      for (const socket of sockets) socket.destroy();
    },
    restore() {
      cut = false;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** Every attempt of a tenant, in id order, as the store has them. */
export async function allAttemptIds(client: HooklineClient, tenantId: string): Promise<bigint[]> {
  const { attempts } = await client.log.listAttempts({ tenantId, pageSize: 1000 });
  return attempts.map((a) => a.id);
}
