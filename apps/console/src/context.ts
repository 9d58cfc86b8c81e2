import { createContext, useContext } from "react";
import type { Api } from "./api.js";

/** Who is signed in and what they may see; set once the session is known. */
export interface Session {
  api: Api;
  /** The tenant shown; fixed for tenant-scoped tokens and portal links. */
  tenantId: string;
  /** Whether the tenant may be changed (admin token, or no tokens configured). */
  tenantFixed: boolean;
  /** Set for an endpoint-scoped portal link. */
  endpointId: string;
  portal: boolean;
  /** The api has no tokens configured: there is nothing to sign out of. */
  open: boolean;
}

export const SessionContext = createContext<Session | undefined>(undefined);

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error("useSession outside a signed-in console");
  return session;
}
