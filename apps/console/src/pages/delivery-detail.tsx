import { AttemptTrigger, DeliveryStatus, type DescribeDeliveryResponse } from "@hookline/contracts";
import { useCallback, useEffect, useState } from "react";
import { errorText } from "../api.js";
import { useSession } from "../context.js";
import { useLatest } from "../latest.js";
import { useLiveAttempts } from "../live-attempts.js";
import { href } from "../route.js";
import { CopyId } from "../ui/copy-id.js";
import { ErrorBox, Loading } from "../ui/states.js";
import { HttpStatus, StatusBadge } from "../ui/status.js";
import { Time } from "../ui/time.js";

/** One delivery: the payload, the headers each attempt sent, every attempt, and retry. */
export function DeliveryDetail({ deliveryId }: { deliveryId: string }) {
  const { api, tenantId } = useSession();
  const [detail, setDetail] = useState<DescribeDeliveryResponse | undefined>();
  const [error, setError] = useState("");
  const [notice, setNotice] = useState("");
  const [busy, setBusy] = useState(false);

  const latest = useLatest();
  const load = useCallback(async () => {
    // A reload started later (a newer attempt, another tenant) may answer first: keep the newest.
    const call = latest.start();
    try {
      const answer = await api.log.describeDelivery({ tenantId, deliveryId }, { signal: call.signal });
      if (!call.take()) return;
      setDetail(answer);
      setError("");
    } catch (e) {
      if (call.take()) setError(errorText(e));
    }
  }, [api, tenantId, deliveryId, latest]);
  useEffect(() => {
    latest.reset();
    setDetail(undefined);
    setError("");
    void load();
    return () => latest.reset();
  }, [load, latest]);

  // New attempts of this delivery's event refresh the page as they are recorded.
  const eventId = detail?.delivery?.eventId ?? "";
  const endpointId = detail?.delivery?.endpointId ?? "";
  const live = useLiveAttempts(api, { tenantId, endpointId, eventId }, eventId !== "");
  const newest = live.attempts[0]?.id;
  useEffect(() => {
    if (newest !== undefined) void load();
  }, [newest, load]);

  const retry = async () => {
    setBusy(true);
    setNotice("");
    try {
      await api.log.retryDelivery({ tenantId, deliveryId });
      setNotice("Retry queued: its attempt appears below when it is made.");
      await load();
    } catch (e) {
      setNotice(errorText(e));
    } finally {
      setBusy(false);
    }
  };

  const tryAgain = () => {
    setError("");
    void load();
  };
  if (error) return <ErrorBox message={error} onRetry={tryAgain} />;
  if (!detail?.delivery) return <Loading what="the delivery" />;
  const d = detail.delivery;
  const requests = [...detail.requests].reverse();
  return (
    <article aria-labelledby="delivery-title" className="delivery">
      <p>
        <a href={href("activity")}>← Activity</a>
      </p>
      <div className="title-row">
        <h1 id="delivery-title">
          Delivery <StatusBadge status={d.status} />
        </h1>
        <button type="button" onClick={retry} disabled={busy || d.status === DeliveryStatus.PENDING}>
          {busy ? "Retrying…" : "Retry now"}
        </button>
      </div>
      {d.status === DeliveryStatus.PENDING && (
        <p className="muted">
          Pending: its next attempt is already scheduled, so retry is off until it is final.
        </p>
      )}
      {notice && <p role="status">{notice}</p>}
      <dl className="facts">
        <dt>delivery</dt>
        <dd>
          <CopyId value={d.id} label="delivery id" />
        </dd>
        <dt>event</dt>
        <dd>
          <CopyId value={d.eventId} label="event id" /> <span className="muted">{detail.eventType}</span>
        </dd>
        <dt>endpoint</dt>
        <dd>
          <CopyId value={d.endpointId} label="endpoint id" />
        </dd>
        <dt>created</dt>
        <dd>
          <Time value={d.createdAt} />
        </dd>
        {d.nextAttemptAt && (
          <>
            <dt>next attempt</dt>
            <dd>
              <Time value={d.nextAttemptAt} />
            </dd>
          </>
        )}
      </dl>
      <h2>Payload</h2>
      <pre className="payload" data-testid="payload">
        {pretty(detail.body)}
      </pre>
      <h2>Attempts ({requests.length})</h2>
      {requests.length === 0 && <p className="muted">No attempt yet: the first one is on its way.</p>}
      <ol className="attempt-cards" aria-label="attempts">
        {requests.map(({ attempt, url, headers }) =>
          attempt ? (
            <li key={String(attempt.id)} className="card" data-attempt={attempt.attemptNumber}>
              <div className="endpoint-head">
                <strong>Attempt {attempt.attemptNumber}</strong>
                <HttpStatus status={attempt.responseStatus} />
                <span>{attempt.durationMs} ms</span>
                <Time value={attempt.startedAt} />
                {attempt.trigger === AttemptTrigger.MANUAL && <span className="badge">manual retry</span>}
              </div>
              {attempt.error && <p className="error">{attempt.error}</p>}
              <details>
                <summary>Request sent</summary>
                <p>
                  <code className="url">POST {url}</code>
                </p>
                <table className="headers" data-testid="headers">
                  <tbody>
                    {headers.map((h) => (
                      <tr key={h.name}>
                        <th scope="row">{h.name}</th>
                        <td>
                          <code>{h.value}</code>
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </details>
              <h3>Response body</h3>
              <pre className="payload">{attempt.responseBody || "(empty)"}</pre>
            </li>
          ) : null,
        )}
      </ol>
    </article>
  );
}

function pretty(json: string): string {
  try {
    return JSON.stringify(JSON.parse(json), null, 2);
  } catch {
    return json;
  }
}
