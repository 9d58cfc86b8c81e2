import { Code, ConnectError } from "@connectrpc/connect";
import type { Attempt } from "@hookline/contracts";
import { useEffect, useRef, useState } from "react";
import { type Api, errorText, isUnreachable } from "./api.js";

export interface LiveFilter {
  tenantId: string;
  endpointId: string;
  eventId: string;
}

export type LiveStatus =
  | { kind: "connecting" }
  | { kind: "live" }
  | { kind: "reconnecting"; inSeconds: number; reason: string }
  | { kind: "stopped"; reason: string };

const SHOWN = 200;
/** Where a stream starts (the api's newest attempt id when asked for 0): sent before any attempt. */
const START_HEADER = "hookline-after-attempt-id";

/**
 * Attempts streamed by WatchAttempts, newest first. After a dropped connection it reconnects with
 * the last id it showed, so the server replays exactly what was missed (no gap, no duplicate).
 */
export function useLiveAttempts(api: Api, filter: LiveFilter, enabled: boolean) {
  const [attempts, setAttempts] = useState<Attempt[]>([]);
  const [status, setStatus] = useState<LiveStatus>({ kind: "connecting" });
  const lastId = useRef(0n);
  const { tenantId, endpointId, eventId } = filter;

  useEffect(() => {
    if (!enabled) return;
    const abort = new AbortController();
    lastId.current = 0n;
    setAttempts([]);
    void (async () => {
      let failures = 0;
      while (!abort.signal.aborted) {
        // Live only once the api answers: its headers come as soon as the stream is open, so a
        // quiet stream still reads as live, and a stream that never opened never does.
        setStatus({ kind: "connecting" });
        try {
          const stream = api.log.watchAttempts(
            { tenantId, endpointId, eventId, afterAttemptId: lastId.current },
            {
              signal: abort.signal,
              onHeader: (headers) => {
                // With 0 ("from now on") the stream starts after the api's newest attempt: that is
                // the cursor, so a reconnect before any attempt arrived still replays the gap.
                // Only a stream that is live carries it: over Connect a refusal (too many
                // streams) also comes with headers, and its error only at the stream's end.
                const start = headers.get(START_HEADER);
                if (start === null || !/^\d+$/.test(start)) return;
                if (lastId.current === 0n) lastId.current = BigInt(start);
                failures = 0;
                setStatus({ kind: "live" });
              },
            },
          );
          for await (const { attempt } of stream) {
            if (!attempt || attempt.id <= lastId.current) continue;
            lastId.current = attempt.id;
            setAttempts((old) => [attempt, ...old].slice(0, SHOWN));
          }
          throw new Error("the stream ended");
        } catch (error) {
          if (abort.signal.aborted) return;
          if (
            error instanceof ConnectError &&
            [Code.PermissionDenied, Code.Unauthenticated].includes(error.code)
          ) {
            setStatus({ kind: "stopped", reason: errorText(error) });
            return;
          }
          failures += 1;
          const inSeconds = Math.min(2 ** (failures - 1), 15);
          // Short: the status line itself says it reconnects, so no "try again shortly" here.
          const reason = isUnreachable(error) ? "Hookline is unreachable" : errorText(error);
          setStatus({ kind: "reconnecting", inSeconds, reason });
          await new Promise((resolve) => setTimeout(resolve, inSeconds * 1000));
        }
      }
    })();
    return () => abort.abort();
  }, [api, tenantId, endpointId, eventId, enabled]);

  return { attempts, status, lastId: lastId.current };
}
