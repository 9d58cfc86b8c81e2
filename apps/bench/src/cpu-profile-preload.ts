import { mkdirSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector";
import { join } from "node:path";

// Loaded with NODE_OPTIONS="--import .../cpu-profile-preload.js" into a Hookline process (Node 20
// refuses --cpu-prof in NODE_OPTIONS, and the test kit starts the apps with fixed arguments).
// SIGUSR2 starts sampling (1 ms, as --cpu-prof), the next SIGUSR2 writes
// BENCH_CPU_PROFILE_DIR/<pid>.cpuprofile: the bench profiles just its measured window.

const dir = process.env.BENCH_CPU_PROFILE_DIR;
if (dir) {
  const session = new Session();
  session.connect();
  session.post("Profiler.enable");
  session.post("Profiler.setSamplingInterval", { interval: 1000 });
  let running = false;
  // An in-process inspector session answers synchronously, so this also works in an exit handler.
  const stop = () => {
    running = false;
    session.post("Profiler.stop", (error, result) => {
      if (error) return;
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, `${process.pid}.cpuprofile`), JSON.stringify(result.profile));
    });
  };
  process.on("SIGUSR2", () => {
    if (running) stop();
    else {
      running = true;
      session.post("Profiler.start");
    }
  });
  process.on("exit", () => {
    if (running) stop();
  });
}
