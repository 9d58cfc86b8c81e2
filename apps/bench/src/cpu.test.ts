import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { watchCpu } from "./cpu.js";

/** A node child that waits waitMs, names itself `title` (its /proc comm), burns burnMs of CPU, and exits. */
function burner(burnMs: number, { waitMs = 0, title = "" } = {}) {
  const script = `
    setTimeout(() => {
      if (${JSON.stringify(title)}) process.title = ${JSON.stringify(title)};
      const start = process.cpuUsage();
      const used = () => { const u = process.cpuUsage(start); return (u.user + u.system) / 1000; };
      while (used() < ${burnMs}) {}
    }, ${waitMs});`;
  const child = spawn(process.execPath, ["-e", script], { stdio: "ignore" });
  return { pid: child.pid ?? 0, exited: once(child, "exit") };
}

test("a process of a pid list that burns CPU and exits inside the window is counted", async () => {
  const child = burner(600, { waitMs: 200 });
  const window = watchCpu({ burner: { pids: [child.pid] } });
  await child.exited;
  await sleep(300);
  const used = window.stop().get("burner") ?? 0;
  // Only what it used after the last 250 ms reading may be lost; a start/end pair would read 0.
  assert.ok(used >= 0.3 && used <= 1.5, `counted ${used} s of the ~0.6 s it burned`);
});

test("a process of a command that starts and exits inside the window counts from 0", async () => {
  const title = `cpuburn${process.pid}`.slice(0, 15); // comm holds 15 characters
  const window = watchCpu({ burner: { command: title } });
  const child = burner(600, { title });
  await child.exited;
  await sleep(300);
  const used = window.stop().get("burner") ?? 0;
  assert.ok(used >= 0.3 && used <= 1.5, `counted ${used} s of the ~0.6 s it burned`);
});

test("a window over a process that stays counts what it used meanwhile", async () => {
  const window = watchCpu({ self: { pids: [process.pid] } });
  const start = process.cpuUsage();
  // 300 ms of this test's CPU, user and system: each reading is a system call, so a loop that
  // waited for 300 ms of user time alone burned seconds of system time first on a busy machine.
  const used300ms = () => {
    const { user, system } = process.cpuUsage(start);
    return user + system >= 300_000;
  };
  while (!used300ms()) {}
  const used = window.stop().get("self") ?? 0;
  assert.ok(used >= 0.25 && used <= 1.5, `counted ${used} s of the ~0.3 s used`);
});
