import { useEffect, useRef } from "react";
import { useSession } from "../context.js";
import { type LiveFilter, useLiveAttempts } from "../live-attempts.js";
import { href } from "../route.js";
import { Empty } from "../ui/states.js";
import { HttpStatus, StatusBadge } from "../ui/status.js";
import { Time } from "../ui/time.js";

/** Attempts as workers record them; says when it is reconnecting and from which id it resumes. */
export function LiveView({
  filter,
  enabled,
  onNewAttempt,
}: {
  filter: LiveFilter;
  enabled: boolean;
  onNewAttempt(): void;
}) {
  const { api } = useSession();
  const { attempts, status, lastId } = useLiveAttempts(api, filter, enabled);
  const newest = attempts[0]?.id;
  const notify = useRef(onNewAttempt);
  notify.current = onNewAttempt;
  useEffect(() => {
    if (newest !== undefined) notify.current();
  }, [newest]);

  return (
    <>
      <p
        className={`live-status ${enabled ? status.kind : "paused"}`}
        role="status"
        data-testid="live-status"
      >
        {!enabled && "Paused."}
        {enabled && status.kind === "live" && "● Live: attempts appear here as they are made."}
        {enabled && status.kind === "connecting" && "Connecting…"}
        {enabled &&
          status.kind === "reconnecting" &&
          `Connection lost (${status.reason}). Reconnecting in ${status.inSeconds}s; resuming after attempt ${lastId}.`}
        {enabled && status.kind === "stopped" && `Stopped: ${status.reason}`}
      </p>
      {enabled && attempts.length === 0 && (
        <Empty>
          <p>
            No attempts since you opened this view. Emit an event, or send a test event, and watch it arrive.
          </p>
        </Empty>
      )}
      {attempts.length > 0 && (
        <ol className="attempts" aria-label="live attempts">
          {attempts.map((a) => (
            <li key={String(a.id)} className="attempt-line" data-event={a.eventId}>
              <Time value={a.startedAt} />
              <HttpStatus status={a.responseStatus} />
              <span>
                attempt {a.attemptNumber} · {a.durationMs} ms
              </span>
              <StatusBadge status={a.deliveryStatus} />
              <a href={href("delivery", a.deliveryId)}>
                {a.eventId} → {a.endpointId}
              </a>
              {a.error && <span className="error">{a.error}</span>}
            </li>
          ))}
        </ol>
      )}
    </>
  );
}
