import { type FormEvent, useState } from "react";

/** Asks an operator for an API token (admin, or tenant:<id>:<token>'s token part). */
export function SignIn({ error, onSubmit }: { error?: string | undefined; onSubmit(token: string): void }) {
  const [text, setText] = useState("");
  const [problem, setProblem] = useState("");
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const read = readToken(text);
    setProblem(read.problem ?? "");
    if (read.token !== undefined) onSubmit(read.token);
  };
  const shown = problem || error;
  return (
    <main className="narrow">
      <h1>Hookline console</h1>
      <form onSubmit={submit} className="card">
        <label htmlFor="token">API token</label>
        <input
          id="token"
          type="password"
          autoComplete="off"
          value={text}
          onChange={(e) => setText(e.target.value)}
          aria-describedby="token-help"
        />
        <p id="token-help" className="muted">
          A token from <code>HOOKLINE_API_TOKENS</code>: an admin token sees every tenant, a tenant's token
          sees that tenant only. For an entry <code>tenant:&lt;id&gt;:&lt;token&gt;</code>, enter the token
          (pasting the whole entry works too). It stays in this tab and is forgotten when the tab closes.
        </p>
        {shown && (
          <p className="error" role="alert">
            {shown}
          </p>
        )}
        <button type="submit">Sign in</button>
      </form>
    </main>
  );
}

/** The token in what was typed, or what is wrong with it, said before any call is made. */
export function readToken(text: string): { token?: string; problem?: string } {
  let token = text.trim();
  if (token === "") return { problem: "Enter a token." };
  // A whole config entry pasted: the api knows the tenant from the token, so only the token counts.
  // A bare (admin) token never starts with "tenant:": the api would read it as an entry.
  if (token.startsWith("tenant:")) {
    const split = token.lastIndexOf(":");
    token = split > "tenant:".length ? token.slice(split + 1) : "";
    if (token === "") return { problem: "That entry has no token after tenant:<id>: (the part to enter)." };
  }
  if (/\s/.test(token)) return { problem: "A token has no spaces: check that only the token was pasted." };
  // A browser sends header values as Latin-1 only; such a token could never be presented from here.
  if (/[^\u0021-\u007e\u00a1-\u00ff]/.test(token)) {
    return {
      problem:
        "This token has a character a browser cannot send (tokens are sent in an HTTP header): check it was copied exactly.",
    };
  }
  return { token };
}
