// The credentials the console calls with. Kept in sessionStorage: gone when the tab closes, never
// in a URL after the first load (a portal token is moved out of the address bar at once).

export interface Credentials {
  /** Bearer token: an API token or a portal token; "" when the api has no tokens configured. */
  token: string;
  portal: boolean;
}

const KEY = "hookline.credentials";

/** A #portal= link whose token cannot be read (a broken % escape): cut short or mangled. */
export class DamagedLinkError extends Error {}

/** The portal link in the address, if any, else the tab's stored credentials. */
export function loadCredentials(): Credentials | undefined {
  const fromLink = /^#portal=([^&]+)/.exec(window.location.hash)?.[1];
  if (fromLink) {
    // Keep the token out of history, bookmarks and screenshots of the address bar.
    history.replaceState(null, "", `${window.location.pathname}#/activity`);
    let token: string;
    try {
      token = decodeURIComponent(fromLink);
    } catch {
      throw new DamagedLinkError(
        "Part of this link could not be read: it was probably cut short or altered.",
      );
    }
    const credentials = { token, portal: true };
    saveCredentials(credentials);
    return credentials;
  }
  const stored = sessionStorage.getItem(KEY);
  if (!stored) return undefined;
  try {
    return JSON.parse(stored) as Credentials;
  } catch {
    return undefined;
  }
}

export function saveCredentials(credentials: Credentials): void {
  sessionStorage.setItem(KEY, JSON.stringify(credentials));
}

export function clearCredentials(): void {
  sessionStorage.removeItem(KEY);
}
