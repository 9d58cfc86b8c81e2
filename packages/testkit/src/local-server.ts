import { once } from "node:events";
import type http from "node:http";
import type { AddressInfo } from "node:net";

/** Listens on a free loopback port; close() drops open connections (a hanging answer included). */
export async function listenLocally(server: http.Server): Promise<{ url: string; close(): Promise<void> }> {
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
