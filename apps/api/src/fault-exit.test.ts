import assert from "node:assert/strict";
import { test } from "node:test";
import type { EmitResult } from "@hookline/store";
import { exitAfterCommits } from "./fault-exit.js";

test("the fault wrapper exits with 137 after the Nth commit, once that commit is done", async () => {
  const committed: string[] = [];
  const exits: number[] = [];
  const commit = exitAfterCommits(
    async (event) => {
      committed.push(event.id);
      return { eventId: event.id, deliveries: [], duplicate: false } satisfies EmitResult;
    },
    2,
    (code) => {
      exits.push(code);
      throw new Error("exited");
    },
  );
  const event = { tenantId: "t", eventType: "a.b", dataJson: "{}" };
  await commit({ ...event, id: "e1" });
  assert.deepEqual(exits, []);
  await assert.rejects(commit({ ...event, id: "e2" }), /exited/);
  assert.deepEqual(committed, ["e1", "e2"], "the second event committed before the exit");
  assert.deepEqual(exits, [137]);
});
