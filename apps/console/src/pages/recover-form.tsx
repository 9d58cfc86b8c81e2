import { type FormEvent, useId, useState } from "react";

/** Picks a time (local, at most 14 days back) since which failed deliveries are requeued. */
export function RecoverForm({ onSubmit, onCancel }: { onSubmit(since: Date): void; onCancel(): void }) {
  const id = useId();
  const [since, setSince] = useState(() => localInputValue(new Date(Date.now() - 24 * 3_600_000)));
  const submit = (event: FormEvent) => {
    event.preventDefault();
    onSubmit(new Date(since));
  };
  return (
    <form className="card form" onSubmit={submit} aria-label="recover failed deliveries">
      <label htmlFor={id}>
        Requeue every failed delivery created since (your local time, at most 14 days ago)
      </label>
      <input
        id={id}
        type="datetime-local"
        required
        value={since}
        onChange={(e) => setSince(e.target.value)}
      />
      <div className="actions">
        <button type="submit">Recover</button>
        <button type="button" className="secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

/** A Date as the value of a datetime-local input, in the viewer's zone. */
export function localInputValue(date: Date): string {
  const local = new Date(date.getTime() - date.getTimezoneOffset() * 60_000);
  return local.toISOString().slice(0, 16);
}
