import { readFile } from "node:fs/promises";
import type http from "node:http";
import path from "node:path";

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".json": "application/json",
  ".woff2": "font/woff2",
};

/** Where the web console's built files are, and the URL prefix they are served under. */
export interface StaticSite {
  prefix: string;
  dir: string;
}

/**
 * Serves a built single-page app from a directory: GET and HEAD only, no listing, no path
 * outside the directory, index.html for the bare prefix. Returns false when the URL is not under
 * the prefix (the request is then someone else's).
 */
export async function serveStatic(
  site: StaticSite,
  req: http.IncomingMessage,
  res: http.ServerResponse,
): Promise<boolean> {
  const url = new URL(req.url ?? "/", "http://host");
  const bare = site.prefix.replace(/\/$/, "");
  if (url.pathname === bare) {
    res.writeHead(308, { location: site.prefix }).end();
    return true;
  }
  if (!url.pathname.startsWith(site.prefix)) return false;
  if (req.method !== "GET" && req.method !== "HEAD") {
    res.writeHead(405, { allow: "GET, HEAD" }).end();
    return true;
  }
  let relative: string;
  try {
    relative = decodeURIComponent(url.pathname.slice(site.prefix.length)) || "index.html";
  } catch {
    res.writeHead(400).end();
    return true;
  }
  const root = path.resolve(site.dir);
  const file = path.resolve(root, relative);
  if (file !== root && !file.startsWith(root + path.sep)) {
    res.writeHead(404).end();
    return true;
  }
  let body: Buffer;
  try {
    body = await readFile(file);
  } catch {
    const missingApp = relative === "index.html";
    res
      .writeHead(404, { "content-type": "text/plain; charset=utf-8" })
      .end(missingApp ? "The console is not built here: run `pnpm build`.\n" : "not found\n");
    return true;
  }
  res.writeHead(200, {
    "content-type": TYPES[path.extname(file)] ?? "application/octet-stream",
    "content-length": body.length,
    // Vite fingerprints everything under assets/; index.html must be re-read to pick up a new build.
    "cache-control": relative.startsWith("assets/") ? "public, max-age=31536000, immutable" : "no-cache",
    "x-content-type-options": "nosniff",
    "content-security-policy":
      "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'",
    "referrer-policy": "no-referrer",
  });
  res.end(req.method === "HEAD" ? undefined : body);
  return true;
}
