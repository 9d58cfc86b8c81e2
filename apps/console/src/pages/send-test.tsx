import { type FormEvent, useState } from "react";
import { errorText } from "../api.js";
import { useSession } from "../context.js";
import { href } from "../route.js";

/** Emits an event for the tenant; every enabled endpoint subscribed to its type gets a delivery. */
export function SendTest() {
  const { api, tenantId } = useSession();
  const [eventType, setEventType] = useState("hookline.test");
  const [data, setData] = useState('{\n  "hello": "world"\n}');
  const [result, setResult] = useState<{ eventId: string; deliveries: string[] } | undefined>();
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);

  const send = async (event: FormEvent) => {
    event.preventDefault();
    setError("");
    setResult(undefined);
    setBusy(true);
    try {
      const reply = await api.emit.emit({ tenantId, eventType: eventType.trim(), dataJson: data });
      setResult({ eventId: reply.eventId, deliveries: reply.deliveryIds });
    } catch (e) {
      setError(errorText(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section aria-labelledby="send-title">
      <h1 id="send-title">Send a test event</h1>
      <form className="card form" onSubmit={send}>
        <label htmlFor="send-type">Event type</label>
        <input id="send-type" required value={eventType} onChange={(e) => setEventType(e.target.value)} />
        <label htmlFor="send-data">Data (JSON)</label>
        <textarea id="send-data" rows={6} value={data} onChange={(e) => setData(e.target.value)} />
        {error && (
          <p className="error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" disabled={busy}>
          {busy ? "Sending…" : "Send"}
        </button>
      </form>
      {result && (
        <div className="card" role="status">
          <p>
            Event <code>{result.eventId}</code> recorded with {result.deliveries.length}{" "}
            {result.deliveries.length === 1 ? "delivery" : "deliveries"}.
          </p>
          {result.deliveries.length === 0 && (
            <p>No enabled endpoint of this tenant is subscribed to this event type.</p>
          )}
          <ul>
            {result.deliveries.map((id) => (
              <li key={id}>
                <a href={href("delivery", id)}>{id}</a>
              </li>
            ))}
          </ul>
        </div>
      )}
    </section>
  );
}
