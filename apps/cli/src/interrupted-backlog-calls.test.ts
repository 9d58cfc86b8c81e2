import assert from "node:assert/strict";
import { once } from "node:events";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { test } from "node:test";
import { type CliResult, runCliInProcess } from "./test-helpers.js";

/**
 * An api that answers ListEndpoints (the CLI's probe) with an empty page and holds every other
 * call open, as a real one does while it cancels a large backlog. `held` resolves with the path
 * of the first call it holds.
 */
async function apiThatHoldsCalls() {
  const streams: http2.ServerHttp2Stream[] = [];
  let heldPath: (path: string) => void = () => {};
  const held = new Promise<string>((resolve) => {
    heldPath = resolve;
  });
  const server = http2.createServer();
  server.on("stream", (stream, headers) => {
    streams.push(stream);
    stream.on("error", () => {});
    const path = String(headers[":path"]);
    stream.resume();
    if (!path.endsWith("/ListEndpoints")) {
      heldPath(path);
      return;
    }
    stream.respond({ ":status": 200, "content-type": "application/grpc+proto" }, { waitForTrailers: true });
    stream.on("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
    // One gRPC message frame: not compressed, zero bytes long (an empty ListEndpointsResponse).
    stream.end(Buffer.alloc(5));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    address: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    held,
    async close() {
      for (const stream of streams) stream.close();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/**
 * Runs a command against an api that holds its call, interrupts it with `signal` once the call
 * is held, and returns the held call's path and the command's result. Fails at once if the
 * command ended without making that call.
 */
async function interruptWhileHeld(
  args: string[],
  signal: NodeJS.Signals,
): Promise<{ path: string; result: CliResult }> {
  const api = await apiThatHoldsCalls();
  try {
    const interrupt = new AbortController();
    const running = runCliInProcess(args, {
      env: { HOOKLINE_ADDRESS: api.address },
      interrupted: interrupt.signal,
    });
    const path = await Promise.race([
      api.held,
      running.then((result) => assert.fail(`the command ended first (${result.code}): ${result.stderr}`)),
    ]);
    interrupt.abort(signal);
    return { path, result: await running };
  } finally {
    await api.close();
  }
}

test("an endpoints delete interrupted before its answer says the delete may go on, and how to check", {
  timeout: 30_000,
}, async () => {
  const { path, result } = await interruptWhileHeld(
    ["endpoints", "delete", "billing", "--tenant", "acme"],
    "SIGINT",
  );
  assert.match(path, /\/DeleteEndpoint$/);
  assert.equal(result.code, 130);
  assert.equal(result.stdout, "");
  assert.equal(
    result.stderr,
    "hookline: interrupted: if the delete reached Hookline it goes on there (the endpoint is removed and its pending deliveries cancelled); hookline endpoints list --tenant acme, with the same --address and --token, shows whether it is gone\n",
  );
});

test("an endpoints recover interrupted before its answer says what was requeued stays queued", {
  timeout: 30_000,
}, async () => {
  const { path, result } = await interruptWhileHeld(
    ["endpoints", "recover", "billing", "--tenant", "acme", "--since", "1h"],
    "SIGTERM",
  );
  assert.match(path, /\/RecoverEndpoint$/);
  assert.equal(result.code, 143);
  assert.equal(
    result.stderr,
    "hookline: interrupted: what was requeued stays queued; run it again for the rest\n",
  );
});
