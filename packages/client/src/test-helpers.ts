import type { HooklineClient } from "./client.js";

/** Every attempt of a tenant, in id order, as the store has them. */
export async function allAttemptIds(client: HooklineClient, tenantId: string): Promise<bigint[]> {
  const { attempts } = await client.log.listAttempts({ tenantId, pageSize: 1000 });
  return attempts.map((a) => a.id);
}
