import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { table } from "./report.js";

// Reads V8 .cpuprofile files (from --cpu-prof) and lists where the time went: by function (self
// time) and by package. Also runnable alone: node apps/bench/dist/profile-summary.js FILE|DIR...

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** Top functions by self time and the time per package, as text. */
export function summarizeProfile(path: string, top = 15): string {
  const profile = JSON.parse(readFileSync(path, "utf8")) as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfUs = new Map<number, number>();
  for (const [i, id] of profile.samples.entries()) {
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const totalUs = profile.endTime - profile.startTime;
  // Inclusive time per package: a sample counts once for every package on its stack.
  const inclusive = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)?.callFrame;
      if (frame) seen.add(packageOf(frame.url, frame.functionName));
    }
    for (const pkg of seen) inclusive.set(pkg, (inclusive.get(pkg) ?? 0) + us);
  }
  const byFunction = new Map<string, number>();
  const byPackage = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const frame = byId.get(id)?.callFrame;
    if (!frame) continue;
    const name = `${frame.functionName || "(anonymous)"} ${shortUrl(frame.url)}${frame.url ? `:${frame.lineNumber + 1}` : ""}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + us);
    const pkg = packageOf(frame.url, frame.functionName);
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + us);
  }
  const idleUs = byPackage.get("(idle)") ?? 0;
  const pct = (us: number) => `${((100 * us) / totalUs).toFixed(1)}%`;
  const rank = (map: Map<string, number>) => [...map].sort((a, b) => b[1] - a[1]).slice(0, top);
  return [
    `${path}: ${(totalUs / 1e6).toFixed(1)} s profiled, ${((totalUs - idleUs) / 1e6).toFixed(1)} s of it busy (% of the profiled time)`,
    table(
      ["self", "total", "package (by self time)"],
      rank(byPackage).map(([name, us]) => [pct(us), pct(inclusive.get(name) ?? us), name]),
    ),
    table(
      ["total", "package (by time on the stack, node internals left out)"],
      rank(new Map([...inclusive].filter(([name]) => !name.startsWith("node:")))).map(([name, us]) => [
        pct(us),
        name,
      ]),
    ),
    table(
      ["self", "function"],
      rank(byFunction).map(([name, us]) => [pct(us), name]),
    ),
  ].join("\n\n");
}

/** Every .cpuprofile under dir (one level of subfolders). */
export function profilesUnder(dir: string): string[] {
  const found: string[] = [];
  const walk = (folder: string, depth: number) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name);
      if (entry.isDirectory() && depth > 0) walk(path, depth - 1);
      else if (entry.name.endsWith(".cpuprofile")) found.push(path);
    }
  };
  walk(dir, 1);
  return found.sort();
}

function shortUrl(url: string): string {
  const modules = url.lastIndexOf("/node_modules/");
  if (modules >= 0) return url.slice(modules + "/node_modules/".length);
  const repo = url.search(/\/(apps|packages)\//);
  return repo >= 0 ? url.slice(repo + 1) : url.replace(/^file:\/\//, "");
}

function packageOf(url: string, functionName: string): string {
  if (url === "") return functionName.startsWith("(") ? functionName : "(native)";
  if (url.startsWith("node:")) return `node:${url.slice(5).split("/")[0]}`;
  const modules = url.lastIndexOf("/node_modules/");
  if (modules >= 0) {
    const parts = url.slice(modules + "/node_modules/".length).split("/");
    return parts[0]?.startsWith("@") ? `${parts[0]}/${parts[1]}` : (parts[0] ?? url);
  }
  const repo = /\/(apps|packages)\/([^/]+)\//.exec(url);
  return repo ? `@hookline/${repo[2]}` : url;
}

const isMain = process.argv[1]?.endsWith("profile-summary.js");
if (isMain) {
  const paths = process.argv
    .slice(2)
    .flatMap((arg) => (arg.endsWith(".cpuprofile") ? [arg] : profilesUnder(arg)));
  if (paths.length === 0) {
    process.stderr.write("usage: node apps/bench/dist/profile-summary.js FILE.cpuprofile|DIR...\n");
    process.exit(2);
  }
  for (const path of paths) process.stdout.write(`${summarizeProfile(path)}\n\n`);
}
