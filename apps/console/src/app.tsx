import { SessionKind } from "@hookline/contracts";
import { useCallback, useEffect, useRef, useState } from "react";
import { createApi, errorText, isAuthError } from "./api.js";
import { type Session, SessionContext } from "./context.js";
import { PortalRefused } from "./pages/portal-refused.js";
import { SignIn } from "./pages/sign-in.js";
import { type Credentials, clearCredentials, loadCredentials, saveCredentials } from "./session.js";
import { Shell } from "./shell.js";
import { ErrorBox, Loading } from "./ui/states.js";

type State =
  | { kind: "checking" }
  | { kind: "sign-in"; error?: string }
  | { kind: "refused"; message: string }
  | { kind: "failed"; message: string; credentials: Credentials | undefined }
  | { kind: "ready"; session: Session };

const TENANT_KEY = "hookline.tenant";

/** Finds out what the stored credentials may see (GetSession), then shows the console or sign-in. */
export function App() {
  const [state, setState] = useState<State>({ kind: "checking" });
  // Counts checks, so a check (or a session) that a newer one replaced changes nothing.
  const checks = useRef(0);

  const check = useCallback(async (credentials: Credentials | undefined) => {
    const n = ++checks.current;
    setState({ kind: "checking" });
    // Credentials refused mid-session end the session here, whichever page's call found out.
    const api = createApi(credentials?.token ?? "", (error) => {
      if (checks.current !== n) return;
      clearCredentials();
      setState((s) => (s.kind === "ready" ? refusedState(credentials, error) : s));
    });
    try {
      const who = await api.portal.getSession({});
      if (checks.current !== n) return;
      const chosen = credentials ?? { token: "", portal: false };
      saveCredentials(chosen);
      const fixed = who.tenantId !== "";
      setState({
        kind: "ready",
        session: {
          api,
          tenantId: fixed ? who.tenantId : (localStorage.getItem(TENANT_KEY) ?? ""),
          tenantFixed: fixed,
          endpointId: who.endpointId,
          portal: chosen.portal,
          open: who.kind === SessionKind.OPEN,
        },
      });
    } catch (error) {
      if (checks.current !== n) return;
      if (isAuthError(error)) {
        clearCredentials();
        setState(refusedState(credentials, error));
      } else {
        // Kept for Try again: credentials are saved only once they work, so a token typed while
        // the api was down exists nowhere else.
        setState({ kind: "failed", message: errorText(error), credentials });
      }
    }
  }, []);

  const open = useCallback(() => {
    try {
      void check(loadCredentials());
    } catch (error) {
      checks.current += 1;
      setState({ kind: "refused", message: errorText(error) });
    }
  }, [check]);

  useEffect(() => {
    open();
    // A portal link opened in a tab already showing the console changes only the fragment: no load.
    const onHash = () => {
      if (window.location.hash.startsWith("#portal=")) open();
    };
    window.addEventListener("hashchange", onHash);
    return () => window.removeEventListener("hashchange", onHash);
  }, [open]);

  const signOut = () => {
    clearCredentials();
    setState({ kind: "sign-in" });
  };
  const setTenant = (tenantId: string) => {
    localStorage.setItem(TENANT_KEY, tenantId);
    setState((s) => (s.kind === "ready" ? { kind: "ready", session: { ...s.session, tenantId } } : s));
  };

  switch (state.kind) {
    case "checking":
      return <Loading what="your session" />;
    case "sign-in":
      return <SignIn error={state.error} onSubmit={(token) => check({ token, portal: false })} />;
    case "refused":
      return <PortalRefused message={state.message} />;
    case "failed":
      return <ErrorBox message={state.message} onRetry={() => check(state.credentials)} />;
    case "ready":
      return (
        <SessionContext.Provider value={state.session}>
          <Shell onSignOut={signOut} onTenant={setTenant} />
        </SessionContext.Provider>
      );
  }
}

/** Where refused credentials lead: a link cannot be signed in again, a token can. */
function refusedState(credentials: Credentials | undefined, error: unknown): State {
  if (credentials?.portal) return { kind: "refused", message: errorText(error) };
  return { kind: "sign-in", ...(credentials && { error: errorText(error) }) };
}
