import { type ReconnectInfo, watchAttempts } from "@hookline/client";
import { NEWEST_ATTEMPT_ID_HEADER } from "@hookline/contracts";
import type { Context } from "./context.js";
import { UsageError } from "./errors.js";
import { ATTEMPT_HEADERS, ATTEMPT_WIDTHS, attemptJson, attemptRow, columnWriter } from "./output.js";

/**
 * `tail`: follows WatchAttempts until interrupted. JSON lines with --json or when stdout is not a
 * terminal, aligned columns otherwise. A dropped stream is resumed after the last attempt shown.
 */
export async function tailCommand(ctx: Context): Promise<void> {
  const { values } = ctx.invocation;
  const filter = {
    tenantId: values.tenant ?? "",
    endpointId: values.endpoint ?? "",
    eventId: values.event ?? "",
  };
  let afterAttemptId = parseCursor(values.after);
  // One unary call first, so a service that is down (or a bad filter) fails at once with a clear
  // message instead of turning into reconnect attempts. Its answer names the newest attempt, and
  // the tail starts right after it: a first stream that fails before it is live then resumes from
  // there too, where "from now on" (0) would have skipped what was recorded until it reconnected.
  let newest: bigint | undefined;
  const onHeader = (headers: Headers) => {
    const id = headers.get(NEWEST_ATTEMPT_ID_HEADER);
    if (id !== null && /^\d{1,19}$/.test(id)) newest = BigInt(id);
  };
  await ctx.client.log.listAttempts({ ...filter, pageSize: 1 }, { ...ctx.call, onHeader });
  // An api from before the header: from now on, as the stream's own header says.
  if (values.after === undefined) afterAttemptId = newest ?? 0n;

  const json = ctx.json || !ctx.stdoutIsTty;
  const columns = columnWriter(ATTEMPT_HEADERS, ATTEMPT_WIDTHS, (line) => ctx.out(line));
  if (!json) columns.header();
  // One line per change of reason, not one per retry of a long outage.
  let lastWhy = "";
  const onReconnect = (info: ReconnectInfo) => {
    const why = info.error ? ctx.describeError(info.error) : "the server ended the stream";
    if (info.retry > 1 && why === lastWhy) return;
    lastWhy = why;
    const resume = info.afterAttemptId > 0n ? ` after attempt ${info.afterAttemptId}` : "";
    ctx.err(`hookline: ${why}; reconnecting${resume} (retrying until interrupted)\n`);
  };
  const attempts = watchAttempts(
    ctx.client,
    { ...filter, afterAttemptId },
    { signal: ctx.signal, onReconnect },
  );
  for await (const attempt of attempts) {
    if (json) ctx.out(`${JSON.stringify(attemptJson(attempt))}\n`);
    else columns.row(attemptRow(attempt));
  }
}

/** Attempt ids are int64: a larger one cannot be sent, and would be retried forever. */
const MAX_ATTEMPT_ID = 2n ** 63n - 1n;

function parseCursor(raw: string | undefined): bigint {
  if (raw === undefined) return 0n;
  if (!/^\d{1,19}$/.test(raw) || BigInt(raw) > MAX_ATTEMPT_ID)
    throw new UsageError(`--after must be an attempt id, not "${raw}"`, "tail");
  return BigInt(raw);
}
