import { type FormEvent, useState } from "react";

/** Asks an operator for an API token (admin, or tenant:<id>:<token>'s token part). */
export function SignIn({ error, onSubmit }: { error?: string | undefined; onSubmit(token: string): void }) {
  const [token, setToken] = useState("");
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (token.trim() !== "") onSubmit(token.trim());
  };
  return (
    <main className="narrow">
      <h1>Hookline console</h1>
      <form onSubmit={submit} className="card">
        <label htmlFor="token">API token</label>
        <input
          id="token"
          type="password"
          autoComplete="off"
          value={token}
          onChange={(e) => setToken(e.target.value)}
          aria-describedby="token-help"
        />
        <p id="token-help" className="muted">
          A token from <code>HOOKLINE_API_TOKENS</code>: an admin token sees every tenant, a tenant's token
          sees that tenant only. It stays in this tab and is forgotten when the tab closes.
        </p>
        {error && (
          <p className="error" role="alert">
            {error}
          </p>
        )}
        <button type="submit">Sign in</button>
      </form>
    </main>
  );
}
