import { parseArgs } from "node:util";
import { UsageError } from "./errors.js";

const OPTIONS = {
  address: { type: "string" },
  token: { type: "string" },
  transport: { type: "string" },
  timeout: { type: "string" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
  tenant: { type: "string" },
  id: { type: "string" },
  url: { type: "string" },
  description: { type: "string" },
  "event-type": { type: "string", multiple: true },
  "all-event-types": { type: "boolean" },
  secret: { type: "string" },
  enable: { type: "boolean" },
  disable: { type: "boolean" },
  endpoint: { type: "string" },
  event: { type: "string" },
  delivery: { type: "string" },
  after: { type: "string" },
  limit: { type: "string" },
  "max-in-flight": { type: "string" },
  "rate-limit": { type: "string" },
  status: { type: "string" },
  since: { type: "string" },
  until: { type: "string" },
  grace: { type: "string" },
  ttl: { type: "string" },
} as const;

type OptionName = keyof typeof OPTIONS;
const GLOBAL: readonly OptionName[] = ["address", "token", "transport", "timeout", "json", "help"];

/** One command: its words, positional arguments (`[x]` optional), options and usage line. */
interface CommandSpec {
  name: string;
  args: readonly string[];
  options: readonly OptionName[];
  usage: string;
}

const FILTERS: readonly OptionName[] = ["tenant", "endpoint", "event"];
const COMMANDS: readonly CommandSpec[] = [
  {
    name: "endpoints create",
    args: [],
    options: ["tenant", "url", "id", "description", "event-type", "secret", "max-in-flight", "rate-limit"],
    usage:
      "--tenant T --url URL [--id ID] [--description TEXT] [--event-type TYPE]... [--secret S] [--max-in-flight N] [--rate-limit PER_SECOND]",
  },
  { name: "endpoints list", args: [], options: ["tenant", "limit"], usage: "--tenant T [--limit N]" },
  { name: "endpoints get", args: ["<id>"], options: ["tenant"], usage: "<id> --tenant T" },
  {
    name: "endpoints update",
    args: ["<id>"],
    options: [
      "tenant",
      "url",
      "description",
      "event-type",
      "all-event-types",
      "enable",
      "disable",
      "max-in-flight",
      "rate-limit",
    ],
    usage:
      "<id> --tenant T [--url URL] [--description TEXT] [--event-type TYPE]... [--all-event-types] [--enable|--disable] [--max-in-flight N (0: default)] [--rate-limit PER_SECOND (0: none)]",
  },
  { name: "endpoints delete", args: ["<id>"], options: ["tenant"], usage: "<id> --tenant T" },
  {
    name: "endpoints rotate-secret",
    args: ["<id>"],
    options: ["tenant", "secret", "grace"],
    usage: "<id> --tenant T [--secret S] [--grace DURATION (the old secret keeps signing; default 24h)]",
  },
  {
    name: "endpoints recover",
    args: ["<id>"],
    options: ["tenant", "since"],
    usage: "<id> --tenant T --since TIME   (requeues its failed deliveries created since then)",
  },
  {
    name: "emit",
    args: ["<type>", "[json]"],
    options: ["tenant", "id"],
    usage: "<type> [json] --tenant T [--id EVENT_ID]   (data from the argument, or from stdin)",
  },
  { name: "event show", args: ["<id>"], options: ["tenant"], usage: "<id> --tenant T" },
  {
    name: "attempts list",
    args: [],
    options: [...FILTERS, "delivery", "limit"],
    usage: "[--tenant T] [--endpoint ID] [--event ID] [--delivery ID] [--limit N]",
  },
  {
    name: "deliveries list",
    args: [],
    options: [...FILTERS, "status", "event-type", "since", "until", "limit"],
    usage:
      "[--tenant T] [--endpoint ID] [--event ID] [--status pending|delivered|failed|cancelled] [--event-type TYPE] [--since TIME] [--until TIME] [--limit N]",
  },
  {
    name: "deliveries show",
    args: ["<id>"],
    options: ["tenant"],
    usage: "<id> --tenant T   (the body and headers sent)",
  },
  {
    name: "deliveries retry",
    args: ["<id>"],
    options: ["tenant"],
    usage: "<id> --tenant T   (one manual attempt now; also resends a delivered one)",
  },
  {
    name: "portal link",
    args: [],
    options: ["tenant", "endpoint", "ttl"],
    usage: "--tenant T [--endpoint ID] [--ttl DURATION (default 1h, at most 7d)]",
  },
  {
    name: "tail",
    args: [],
    options: [...FILTERS, "after"],
    usage: "[--tenant T] [--endpoint ID] [--event ID] [--after ATTEMPT_ID (0 or unset: from now)]",
  },
];

export type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS }>>["values"];

/** A parsed command line: the command's name ("endpoints get"), its positionals and its options. */
export interface Invocation {
  command: string | undefined;
  args: string[];
  values: Values;
}

/** Parses argv (without node and script); a command line that cannot run throws UsageError. */
export function parseCommandLine(argv: readonly string[]): Invocation {
  let parsed: { values: Values; positionals: string[] };
  try {
    parsed = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const { values, positionals } = parsed;
  const [first, second] = positionals;
  if (first === undefined) return { command: undefined, args: [], values };
  if (first === "help") {
    // `hookline help endpoints`, `hookline help endpoints list`: that group's or command's usage.
    const topic = [first, second, positionals[2]]
      .slice(1)
      .filter((w) => w !== undefined)
      .join(" ");
    const known = COMMANDS.some((c) => c.name === topic || c.name.startsWith(`${topic} `));
    // A mistyped topic (`help endpoint`) is a usage error, not the overview with exit status 0.
    if (topic !== "" && !known) throw new UsageError(`no help on "${topic}": there is no such command`);
    return {
      command: topic !== "" ? topic : undefined,
      args: [],
      values: { ...values, help: true },
    };
  }
  const spec =
    COMMANDS.find((c) => c.name === `${first} ${second}`) ?? COMMANDS.find((c) => c.name === first);
  if (!spec) {
    const group = COMMANDS.some((c) => c.name.startsWith(`${first} `));
    // `hookline endpoints --help`: the usage of the group.
    if (group && second === undefined && values.help) return { command: first, args: [], values };
    const message = group
      ? second === undefined
        ? `"${first}" needs a subcommand`
        : `unknown subcommand "${first} ${second}"`
      : `unknown command "${first}"`;
    throw new UsageError(message, group ? first : undefined);
  }
  if (values.help) return { command: spec.name, args: [], values };
  const args = positionals.slice(spec.name.split(" ").length);
  const required = spec.args.filter((a) => a.startsWith("<")).length;
  if (args.length < required) throw new UsageError(`${spec.name} needs ${spec.args[args.length]}`, spec.name);
  if (args.length > spec.args.length) {
    throw new UsageError(`unexpected argument "${args[spec.args.length]}"`, spec.name);
  }
  for (const name of Object.keys(values) as OptionName[]) {
    if (!GLOBAL.includes(name) && !spec.options.includes(name)) {
      throw new UsageError(`--${name} is not an option of ${spec.name}`, spec.name);
    }
  }
  return { command: spec.name, args, values };
}

/** Usage of one command, of a group ("endpoints"), or of everything. */
export function usage(command?: string): string {
  const specs = COMMANDS.filter((c) => !command || c.name === command || c.name.startsWith(`${command} `));
  const width = Math.max(...specs.map((c) => c.name.length));
  const lines = specs.map((c) => `  hookline ${c.name.padEnd(width)}  ${c.usage}`);
  return `Usage:
${lines.join("\n")}

Options for every command:
  --address ADDR             host:port or http(s) URL of the api
                             (default: $HOOKLINE_ADDRESS, else 127.0.0.1:50051)
  --token TOKEN              sent as "authorization: Bearer TOKEN" (default: $HOOKLINE_TOKEN)
  --transport grpc|connect   wire protocol (default grpc)
  --timeout DURATION         how long a call waits for an answer (default 20s; endpoints delete
                             and recover wait that long for a first answer, then for the work)
  --json                     JSON output: one object, or one line per item for lists and tail
                             (tail writes JSON lines whenever stdout is not a terminal)
  -h, --help                 show this help

TIME is a moment (2026-12-01T09:00:00Z) or how long ago (30m, 6h, 2d). DURATION is like 90s, 30m, 6h.
`;
}

/** The required --tenant, or a usage error naming the command. */
export function requireTenant(invocation: Invocation): string {
  const tenant = invocation.values.tenant;
  if (!tenant) throw new UsageError(`${invocation.command} needs --tenant`, invocation.command);
  return tenant;
}

/** --limit as a positive integer, or the fallback. */
export function limitOf(invocation: Invocation, fallback: number): number {
  const raw = invocation.values.limit;
  if (raw === undefined) return fallback;
  const limit = Number(raw);
  if (!Number.isSafeInteger(limit) || limit < 1) {
    throw new UsageError(`--limit must be a positive integer, not "${raw}"`, invocation.command);
  }
  return limit;
}
