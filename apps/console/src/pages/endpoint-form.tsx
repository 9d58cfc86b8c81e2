import { type FormEvent, useId, useState } from "react";

/** What the create and edit forms collect. */
export interface EndpointFields {
  url: string;
  description: string;
  eventTypes: string[];
  /** Undefined: the service default. */
  maxInFlight?: number | undefined;
  /** Undefined: no limit. */
  rateLimitPerSecond?: number | undefined;
}

/** Create or edit an endpoint's URL, description and event types. */
export function EndpointForm({
  initial,
  submitLabel,
  onSubmit,
  onCancel,
}: {
  initial?: EndpointFields;
  submitLabel: string;
  onSubmit(fields: EndpointFields): Promise<void>;
  onCancel?: () => void;
}) {
  const id = useId();
  const [url, setUrl] = useState(initial?.url ?? "");
  const [description, setDescription] = useState(initial?.description ?? "");
  // One type per line: a type may hold a comma but never whitespace, so lines lose nothing.
  const [types, setTypes] = useState(initial?.eventTypes.join("\n") ?? "");
  const [maxInFlight, setMaxInFlight] = useState(initial?.maxInFlight?.toString() ?? "");
  const [rate, setRate] = useState(initial?.rateLimitPerSecond?.toString() ?? "");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState("");
  // Commas once separated types here: a trailing one is most likely that habit, so say what it does.
  const commaEnded = splitTypes(types).find((t) => t.endsWith(","));
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError("");
    try {
      await onSubmit({
        url: url.trim(),
        description: description.trim(),
        eventTypes: splitTypes(types),
        maxInFlight: maxInFlight.trim() === "" ? undefined : Number(maxInFlight),
        rateLimitPerSecond: rate.trim() === "" ? undefined : Number(rate),
      });
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form className="card form" onSubmit={submit} aria-label={submitLabel}>
      <label htmlFor={`${id}-url`}>URL</label>
      <input
        id={`${id}-url`}
        type="url"
        required
        placeholder="https://example.com/webhooks"
        value={url}
        onChange={(e) => setUrl(e.target.value)}
      />
      <label htmlFor={`${id}-description`}>Description</label>
      <input id={`${id}-description`} value={description} onChange={(e) => setDescription(e.target.value)} />
      <label htmlFor={`${id}-types`}>Event types, one per line</label>
      <textarea
        id={`${id}-types`}
        rows={3}
        placeholder={"invoice.paid\ninvoice.failed\n(empty: every type)"}
        value={types}
        onChange={(e) => setTypes(e.target.value)}
        aria-describedby={commaEnded ? `${id}-types-hint` : undefined}
      />
      {commaEnded && (
        <p id={`${id}-types-hint`} className="muted">
          <code>{commaEnded}</code> ends with a comma, which is kept as part of the type. Put each type on a
          line of its own.
        </p>
      )}
      <fieldset className="limits">
        <legend>Limits</legend>
        <label htmlFor={`${id}-inflight`}>Attempts in flight at most</label>
        <input
          id={`${id}-inflight`}
          type="number"
          min={1}
          max={1000}
          step={1}
          placeholder="service default"
          value={maxInFlight}
          onChange={(e) => setMaxInFlight(e.target.value)}
        />
        <label htmlFor={`${id}-rate`}>Attempts per second at most</label>
        <input
          id={`${id}-rate`}
          type="number"
          min={0}
          max={10000}
          step="any"
          placeholder="no limit"
          value={rate}
          onChange={(e) => setRate(e.target.value)}
        />
      </fieldset>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      <div className="actions">
        <button type="submit" disabled={busy}>
          {busy ? "Saving…" : submitLabel}
        </button>
        {onCancel && (
          <button type="button" className="secondary" onClick={onCancel}>
            Cancel
          </button>
        )}
      </div>
    </form>
  );
}

/**
 * The event types typed one per line. Only line breaks separate: a line holding a space stays one
 * type, which the api refuses ("must not contain spaces") rather than the form saving two.
 */
export function splitTypes(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((t) => t.trim())
    .filter((t) => t !== "");
}
