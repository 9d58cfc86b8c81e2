import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { createHooklineClient } from "@hookline/client";
import { eventually, readTestSettings } from "@hookline/testkit";
import { type RunningHookline, runCliInProcess, startCli, startHookline } from "./test-helpers.js";

const settings = readTestSettings(process.env);
const kind = settings.kind;
let hookline: RunningHookline;
let env: Record<string, string>;

before(async () => {
  // One stream in all: a test holds it to keep tail's first stream from going live.
  hookline = await startHookline(settings, { env: { HOOKLINE_MAX_STREAMS: "1" } });
  env = { HOOKLINE_ADDRESS: hookline.address };
});
after(() => hookline?.close());

async function ok(args: string[]): Promise<string> {
  const result = await runCliInProcess(args, { env });
  assert.equal(result.code, 0, `hookline ${args.join(" ")}:\n${result.stderr}`);
  return result.stdout;
}

async function attemptCount(tenant: string): Promise<number> {
  const out = await ok(["attempts", "list", "--tenant", tenant, "--json"]);
  return out.split("\n").filter((line) => line !== "").length;
}

// The newest-attempt header arrives as a gRPC header and as a Connect response header alike.
for (const transport of ["grpc", "connect"] as const) {
  test(`tail starts after the newest attempt when it starts, even if its first stream is refused (${transport}, ${kind})`, async () => {
    const tenant = `started-${transport}`;
    await ok(["endpoints", "create", "--tenant", tenant, "--id", "ep", "--url", hookline.receiver.url]);
    await ok(["emit", "thing.done", "{}", "--tenant", tenant, "--id", "before"]);
    await eventually(
      () => attemptCount(tenant),
      (n) => n === 1,
    );
    // Another client holds the only stream, so tail's first WatchAttempts is refused and retried.
    const holder = createHooklineClient({ address: hookline.address });
    const hold = new AbortController();
    const live = new Promise<void>((resolve, reject) => {
      const stream = holder.log.watchAttempts({}, { signal: hold.signal, onHeader: () => resolve() });
      (async () => {
        for await (const _ of stream);
      })().catch((error: unknown) => {
        if (!hold.signal.aborted) reject(error);
      });
    });
    await live;
    const tail = startCli(["tail", "--json", "--tenant", tenant, "--transport", transport], env);
    try {
      await eventually(
        async () => tail.stderr,
        (stderr) => stderr.includes("reconnecting"),
      );
      // Recorded after tail started, while it had no stream: it must still be shown.
      await ok(["emit", "thing.done", "{}", "--tenant", tenant, "--id", "during"]);
      await eventually(
        () => attemptCount(tenant),
        (n) => n === 2,
      );
      hold.abort();
      await ok(["emit", "thing.done", "{}", "--tenant", tenant, "--id", "after"]);
      const lines = await tail.waitForLines(2);
      const events = lines.map((line) => (JSON.parse(line) as { eventId: string }).eventId);
      // Not "before" (it existed when tail started); "during" was lost when the retry asked for
      // attempts "from now on".
      assert.deepEqual(events.sort(), ["after", "during"]);
    } finally {
      hold.abort();
      holder.close();
      assert.equal(await tail.stop("SIGINT"), 0, tail.stderr);
    }
  });
}
