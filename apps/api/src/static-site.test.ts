import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { serveStatic } from "./static-site.js";

let root: string;
let server: http.Server;
let base: string;

before(async () => {
  root = await mkdtemp(path.join(tmpdir(), "hookline-site-"));
  await mkdir(path.join(root, "site", "assets"), { recursive: true });
  await writeFile(path.join(root, "site", "index.html"), "<!doctype html><title>console</title>");
  await writeFile(path.join(root, "site", "assets", "app-1234.js"), "console.log(1)");
  await writeFile(path.join(root, "secret.txt"), "outside the site");
  const site = { prefix: "/ui/", dir: path.join(root, "site") };
  server = http.createServer((req, res) => {
    serveStatic(site, req, res).then((served) => served || res.writeHead(418).end());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(async () => {
  server.close();
  await rm(root, { recursive: true, force: true });
});

/** A raw GET, so paths such as /ui/../x reach the server unnormalised. */
function get(
  pathname: string,
  method = "GET",
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}${pathname}`, { method }, (res) => {
      let body = "";
      res.on("data", (chunk: Buffer) => {
        body += chunk.toString();
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

test("the console's index and fingerprinted assets are served with their types and caching", async () => {
  const index = await get("/ui/");
  assert.equal(index.status, 200);
  assert.match(index.headers["content-type"] ?? "", /text\/html/);
  assert.equal(index.headers["cache-control"], "no-cache");
  assert.match(index.body, /console/);
  const asset = await get("/ui/assets/app-1234.js");
  assert.match(asset.headers["content-type"] ?? "", /javascript/);
  assert.match(asset.headers["cache-control"] ?? "", /immutable/);
  assert.equal((await get("/ui", "GET")).status, 308);
  assert.equal((await get("/ui/", "HEAD")).body, "");
});

test("nothing outside the directory, no other methods, and other paths are left to the RPC handler", async () => {
  for (const attempt of ["/ui/../secret.txt", "/ui/%2e%2e/secret.txt", "/ui/assets/../../secret.txt"]) {
    const response = await get(attempt);
    assert.ok(!response.body.includes("outside the site"), attempt);
  }
  assert.equal((await get("/ui/missing.js")).status, 404);
  assert.equal((await get("/ui/", "POST")).status, 405);
  assert.equal((await get("/hookline.v1.EmitService/Emit")).status, 418);
});
