import { type FormEvent, useId, useState } from "react";

/** What the create and edit forms collect. */
export interface EndpointFields {
  url: string;
  description: string;
  eventTypes: string[];
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
  const [types, setTypes] = useState(initial?.eventTypes.join(", ") ?? "");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState("");
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError("");
    try {
      await onSubmit({
        url: url.trim(),
        description: description.trim(),
        eventTypes: types
          .split(",")
          .map((t) => t.trim())
          .filter((t) => t !== ""),
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
      <label htmlFor={`${id}-types`}>Event types</label>
      <input
        id={`${id}-types`}
        placeholder="invoice.paid, invoice.failed (empty: every type)"
        value={types}
        onChange={(e) => setTypes(e.target.value)}
      />
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
