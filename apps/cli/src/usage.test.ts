import assert from "node:assert/strict";
import { once } from "node:events";
import net from "node:net";
import { test } from "node:test";
import { parseCommandLine } from "./cli.js";
import { runCli, runCliInProcess, startCli } from "./test-helpers.js";

/** A port that was just free: nothing listens on it. */
async function closedPort(): Promise<number> {
  const server = net.createServer().listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

test("a service that is down gets one clear line and exit status 1", async () => {
  const port = await closedPort();
  const address = `127.0.0.1:${port}`;
  const expected = `hookline: cannot reach Hookline at ${address}: connection refused\n`;
  for (const args of [
    ["endpoints", "list", "--tenant", "acme", "--address", address],
    ["emit", "a.b", "{}", "--tenant", "acme", "--address", address],
    ["tail", "--json", "--address", address],
  ]) {
    const result = await runCli(args);
    assert.equal(result.stderr, expected, args.join(" "));
    assert.equal(result.code, 1);
    assert.equal(result.stdout, "");
  }
  // An address from the environment is named as such: a stale HOOKLINE_ADDRESS is then obvious.
  const fromEnv = await runCli(["attempts", "list"], { env: { HOOKLINE_ADDRESS: address } });
  assert.equal(
    fromEnv.stderr,
    `hookline: cannot reach Hookline at ${address} (HOOKLINE_ADDRESS): connection refused\n`,
  );
  assert.equal(fromEnv.code, 1);
  // So is one that is not an address at all.
  for (const [args, env, source] of [
    [["--address", "exa mple"], {}, "--address"],
    [[], { HOOKLINE_ADDRESS: "ftp://example.com" }, "HOOKLINE_ADDRESS"],
  ] as const) {
    const bad = await runCli(["attempts", "list", ...args], { env });
    assert.equal(bad.code, 2);
    assert.ok(bad.stderr.startsWith(`hookline: ${source}: address "`), bad.stderr);
  }
});

test("a connection reset reads as one, not as an aborted call", async () => {
  // Accepts connections and resets each one at once (TCP RST), as a crashing api or a middlebox
  // that lost the connection would.
  const server = net.createServer((socket) => socket.resetAndDestroy());
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const address = `127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  try {
    const result = await runCli(["endpoints", "list", "--tenant", "acme", "--address", address]);
    assert.equal(result.stderr, `hookline: cannot reach Hookline at ${address}: connection reset\n`);
    assert.equal(result.code, 1);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});

test("an api that never answers is reported within the call deadline (--timeout), by every command", {
  timeout: 60_000,
}, async () => {
  // Accepts connections and never answers, as a stalled proxy or a wedged process would.
  const held: net.Socket[] = [];
  const server = net.createServer((socket) => {
    held.push(socket);
    socket.on("error", () => {});
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const address = `127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  try {
    // delete and recover have no deadline of their own (they may run long); they used to wait
    // here forever.
    const commands = [
      ["endpoints", "delete", "ep", "--tenant", "acme"],
      ["endpoints", "recover", "ep", "--tenant", "acme", "--since", "1h"],
      ["endpoints", "get", "ep", "--tenant", "acme"],
      ["tail", "--tenant", "acme"],
    ];
    const results = await Promise.all(
      commands.map((args) => runCli([...args, "--address", address, "--timeout", "2s"])),
    );
    for (const [i, result] of results.entries()) {
      assert.equal(
        result.stderr,
        `hookline: no answer from Hookline at ${address} within 2s (--timeout waits longer)\n`,
        commands[i]?.join(" "),
      );
      assert.equal(result.code, 1);
    }
  } finally {
    for (const socket of held) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  }
});

test("a command stopped by a signal exits 130 for SIGINT and 143 for SIGTERM", async () => {
  // An api that never answers keeps the call running until the signal comes.
  const connected: net.Socket[] = [];
  let arrived: (() => void) | undefined;
  const server = net.createServer((socket) => {
    connected.push(socket);
    socket.on("error", () => {});
    arrived?.();
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const address = `127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  try {
    for (const [signal, status] of [
      ["SIGINT", 130],
      ["SIGTERM", 143],
    ] as const) {
      const connection = new Promise<void>((resolve) => {
        arrived = resolve;
      });
      const cli = startCli(["endpoints", "get", "ep", "--tenant", "acme", "--address", address], {});
      await connection;
      assert.equal(await cli.stop(signal), status, `${signal}: ${cli.stderr}`);
    }
  } finally {
    for (const socket of connected) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  }
});

test("usage errors print the problem and the usage, with exit status 2", async () => {
  const cases: [string[], RegExp][] = [
    [[], /^Usage:/m],
    [["frobnicate"], /^hookline: unknown command "frobnicate"/],
    [
      ["endpoints", "list", "--tenant", "acme", "--timeout", "0s"],
      /^hookline: --timeout must be a duration above zero/,
    ],
    [
      ["endpoints", "list", "--tenant", "acme", "--timeout", "soon"],
      /^hookline: --timeout must be a duration above zero/,
    ],
    // Longer than a timer can wait: the call would have failed at once, "after 30d".
    [
      ["endpoints", "list", "--tenant", "acme", "--timeout", "30d"],
      /^hookline: --timeout must be a duration above zero and at most 24d/,
    ],
    [["endpoints"], /^hookline: "endpoints" needs a subcommand/],
    [["endpoints", "get", "--tenant", "a"], /^hookline: endpoints get needs <id>/],
    [["endpoints", "list"], /^hookline: endpoints list needs --tenant/],
    [["endpoints", "create", "--tenant", "a"], /^hookline: endpoints create needs --url/],
    [["endpoints", "update", "x", "--tenant", "a"], /^hookline: nothing to update/],
    [["emit", "a.b", "--tenant", "a"], /^hookline: emit needs the event's data/],
    [["attempts", "list", "--url", "x"], /^hookline: --url is not an option of attempts list/],
    [["tail", "--after", "soon"], /^hookline: --after must be an attempt id/],
    [["attempts", "list", "--limit", "0"], /^hookline: --limit must be a positive integer/],
    [["attempts", "list", "--bogus"], /^hookline: Unknown option '--bogus'/],
    [["event", "show", "a", "b", "--tenant", "t"], /^hookline: unexpected argument "b"/],
    [["attempts", "list", "--transport", "smoke"], /^hookline: --transport must be grpc or connect/],
    [["endpoints", "recover", "ep", "--tenant", "a"], /^hookline: endpoints recover needs --since/],
    [
      ["endpoints", "recover", "ep", "--tenant", "a", "--since", "yesterday"],
      /^hookline: --since must be a time with its zone .* not "yesterday"/,
    ],
    // A date-time without its zone would mean another moment on another machine.
    [
      ["deliveries", "list", "--until", "2026-12-01T09:00:00"],
      /^hookline: --until must be a time with its zone/,
    ],
    [["deliveries", "list", "--since", "2026-02-30"], /^hookline: --since must be a time with its zone/],
    [
      ["deliveries", "list", "--since", "1h", "--until", "2h"],
      /^hookline: --until must be later than --since/,
    ],
    [
      ["deliveries", "list", "--status", "lost"],
      /^hookline: --status must be one of pending, delivered, failed, cancelled/,
    ],
    [
      ["deliveries", "list", "--event-type", "a", "--event-type", "b"],
      /^hookline: deliveries list takes one --event-type/,
    ],
    [["deliveries", "show", "--tenant", "a"], /^hookline: deliveries show needs <id>/],
    [["deliveries", "retry", "d1"], /^hookline: deliveries retry needs --tenant/],
    [
      ["endpoints", "rotate-secret", "ep", "--tenant", "a", "--grace", "soon"],
      /^hookline: --grace must be a duration/,
    ],
    [["portal", "link", "--tenant", "a", "--ttl", "1 week"], /^hookline: --ttl must be a duration/],
    // Not a uint32: before, the request failed to encode, reported as "internal: serialize binary".
    [
      ["endpoints", "update", "ep", "--tenant", "a", "--max-in-flight", "1.5"],
      /^hookline: --max-in-flight must be a whole number/,
    ],
    [
      ["endpoints", "create", "--tenant", "a", "--url", "https://x.test", "--max-in-flight=-3"],
      /^hookline: --max-in-flight must be a whole number/,
    ],
    // Above int64: before, tail retried the unencodable request until interrupted.
    [["tail", "--after", "9999999999999999999"], /^hookline: --after must be an attempt id/],
  ];
  // The binary itself, once: its exit status is the one run() returns.
  const spawned = await runCli(["frobnicate"]);
  assert.equal(spawned.code, 2, spawned.stderr);
  assert.match(spawned.stderr, /^hookline: unknown command "frobnicate"/);
  for (const [args, message] of cases) {
    const result = await runCliInProcess(args, { env: { HOOKLINE_ADDRESS: "127.0.0.1:1" } });
    assert.equal(result.code, 2, `hookline ${args.join(" ")}: ${result.stderr}`);
    assert.match(result.stderr, message, args.join(" "));
    assert.match(result.stderr, /Usage:\n {2}hookline /, args.join(" "));
  }
});

test("--help prints the usage of everything or of one command", async () => {
  const all = await runCli(["--help"]);
  assert.equal(all.code, 0);
  const commands = [
    "endpoints create",
    "endpoints recover",
    "emit",
    "deliveries show",
    "portal link",
    "tail",
  ];
  for (const command of commands) {
    assert.ok(all.stdout.includes(`hookline ${command} `), command);
  }
  const one = await runCliInProcess(["tail", "--help"]);
  assert.equal(one.code, 0);
  assert.match(one.stdout, /hookline tail +\[--tenant T\]/);
  assert.doesNotMatch(one.stdout, /endpoints create/);
  const group = await runCliInProcess(["endpoints", "--help"]);
  assert.equal(group.code, 0);
  assert.match(group.stdout, /hookline endpoints create .*\n {2}hookline endpoints list /);
  assert.doesNotMatch(group.stdout, /hookline tail/);
  // `help <group>` reads as `<group> --help`, not as the overview.
  const viaHelp = await runCliInProcess(["help", "endpoints"]);
  assert.equal(viaHelp.code, 0);
  assert.equal(viaHelp.stdout, group.stdout);
  assert.equal((await runCliInProcess(["help", "tail"])).stdout, one.stdout);
  const typo = await runCliInProcess(["help", "endpoint"]);
  assert.equal(typo.code, 2);
  assert.equal(typo.stdout, "");
  assert.match(typo.stderr, /^hookline: no help on "endpoint": there is no such command\n\nUsage:/);
});

test("options are accepted before, between and after the command words", () => {
  const parsed = parseCommandLine(["--tenant", "a", "endpoints", "--json", "get", "ep_1"]);
  assert.equal(parsed.command, "endpoints get");
  assert.deepEqual(parsed.args, ["ep_1"]);
  assert.equal(parsed.values.tenant, "a");
  assert.equal(parsed.values.json, true);
  const repeated = parseCommandLine(["endpoints", "create", "--event-type", "a", "--event-type", "b"]);
  assert.deepEqual(repeated.values["event-type"], ["a", "b"]);
});
