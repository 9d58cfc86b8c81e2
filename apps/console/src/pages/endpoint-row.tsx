import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { type Endpoint, EndpointStatus } from "@hookline/contracts";
import { useEffect, useRef, useState } from "react";
import { errorText } from "../api.js";
import { useSession } from "../context.js";
import { href } from "../route.js";
import { CopyId } from "../ui/copy-id.js";
import { Time } from "../ui/time.js";
import { type EndpointFields, EndpointForm } from "./endpoint-form.js";
import { RecoverForm } from "./recover-form.js";

type Mode = "view" | "edit" | "confirm-delete" | "recover";

/** One endpoint with its actions. The secret is fetched (GetEndpoint) only when asked for. */
export function EndpointRow({
  endpoint,
  onChange,
  onDeleted,
}: {
  endpoint: Endpoint;
  onChange(endpoint: Endpoint): void;
  onDeleted(id: string): void;
}) {
  const { api, tenantId } = useSession();
  const [mode, setMode] = useState<Mode>("view");
  const [secret, setSecret] = useState("");
  const [notice, setNotice] = useState("");
  const [error, setError] = useState("");
  const keepRef = useRef<HTMLButtonElement>(null);
  // Asking to delete moves focus to the safe answer, so Enter never deletes by accident.
  useEffect(() => {
    if (mode === "confirm-delete") keepRef.current?.focus();
  }, [mode]);
  const enabled = endpoint.status === EndpointStatus.ENABLED;
  const ref = { tenantId, id: endpoint.id };

  const run = async (action: () => Promise<void>) => {
    setError("");
    setNotice("");
    try {
      await action();
    } catch (e) {
      setError(errorText(e));
    }
  };
  const save = async (fields: EndpointFields) => {
    try {
      const { endpoint: updated } = await api.endpoints.updateEndpoint({
        ...ref,
        url: fields.url,
        description: fields.description,
        // Sent only when edited, so a save of other fields never rewrites the types.
        ...(!sameList(fields.eventTypes, endpoint.eventTypes) && {
          eventTypes: fields.eventTypes,
          replaceEventTypes: true,
        }),
        // Update's convention: 0 returns to the default (in flight) or removes the limit (rate).
        maxInFlight: fields.maxInFlight ?? 0,
        rateLimitPerSecond: fields.rateLimitPerSecond ?? 0,
      });
      if (updated) onChange(updated);
      setMode("view");
    } catch (e) {
      throw new Error(errorText(e));
    }
  };
  const toggle = () =>
    run(async () => {
      const status = enabled ? EndpointStatus.DISABLED : EndpointStatus.ENABLED;
      const { endpoint: updated } = await api.endpoints.updateEndpoint({ ...ref, status });
      if (updated) onChange(updated);
    });
  const reveal = () =>
    run(async () => {
      const { endpoint: full } = await api.endpoints.getEndpoint(ref);
      setSecret(full?.secret ?? "");
    });
  const rotate = () =>
    run(async () => {
      const { endpoint: rotated } = await api.endpoints.rotateEndpointSecret(ref);
      setSecret(rotated?.secret ?? "");
      setNotice(
        "New secret below. The previous one keeps signing for 24 hours, so receivers can switch over.",
      );
    });
  const remove = () =>
    run(async () => {
      await api.endpoints.deleteEndpoint(ref);
      onDeleted(endpoint.id);
    });
  const recover = (since: Date) =>
    run(async () => {
      const { requeued } = await api.endpoints.recoverEndpoint({ ...ref, since: timestampFromDate(since) });
      setNotice(`${requeued} failed ${requeued === 1 ? "delivery" : "deliveries"} requeued.`);
      setMode("view");
    });

  return (
    <li className="card endpoint" data-endpoint={endpoint.id}>
      <div className="endpoint-head">
        <span className={`badge ${enabled ? "delivered" : "failed"}`}>
          {enabled ? "enabled" : "disabled"}
        </span>
        <strong className="url">{endpoint.url}</strong>
      </div>
      <dl className="facts">
        <dt>id</dt>
        <dd>
          <CopyId value={endpoint.id} label="endpoint id" />
        </dd>
        {endpoint.description && (
          <>
            <dt>description</dt>
            <dd>{endpoint.description}</dd>
          </>
        )}
        <dt>event types</dt>
        <dd className="types">
          {/* One code element each: a type may hold a comma, so a joined list would be ambiguous. */}
          {endpoint.eventTypes.length
            ? endpoint.eventTypes.map((t) => <code key={t}>{t}</code>)
            : "every type"}
        </dd>
        {endpoint.disabledReason && (
          <>
            <dt>disabled because</dt>
            <dd>{endpoint.disabledReason}</dd>
          </>
        )}
        <dt>limits</dt>
        <dd>
          {endpoint.maxInFlight === undefined ? "default in flight" : `${endpoint.maxInFlight} in flight`}
          {", "}
          {endpoint.rateLimitPerSecond === undefined ? "no rate limit" : `${endpoint.rateLimitPerSecond}/s`}
        </dd>
        <dt>created</dt>
        <dd>
          <Time value={endpoint.createdAt} />
        </dd>
      </dl>
      {secret && (
        <p className="secret" data-testid="secret">
          Signing secret: <code>{secret}</code>{" "}
          <button type="button" className="link" onClick={() => setSecret("")}>
            Hide
          </button>
        </p>
      )}
      {notice && <p role="status">{notice}</p>}
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      {mode === "edit" && (
        <EndpointForm
          initial={endpoint}
          submitLabel="Save"
          onSubmit={save}
          onCancel={() => setMode("view")}
        />
      )}
      {mode === "recover" && <RecoverForm onSubmit={recover} onCancel={() => setMode("view")} />}
      {mode === "confirm-delete" && (
        <div className="confirm" role="alertdialog" aria-label="confirm delete">
          <p>
            Delete <code>{endpoint.id}</code>? Its pending deliveries are cancelled. This cannot be undone.
          </p>
          <button type="button" className="danger" onClick={remove}>
            Delete endpoint
          </button>
          <button type="button" className="secondary" onClick={() => setMode("view")} ref={keepRef}>
            Keep it
          </button>
        </div>
      )}
      {mode === "view" && (
        <div className="actions">
          <a href={href("activity", endpoint.id)}>Activity</a>
          <button type="button" className="secondary" onClick={() => setMode("edit")}>
            Edit
          </button>
          <button type="button" className="secondary" onClick={toggle}>
            {enabled ? "Disable" : "Enable"}
          </button>
          {!secret && (
            <button type="button" className="secondary" onClick={reveal}>
              Reveal secret
            </button>
          )}
          <button type="button" className="secondary" onClick={rotate}>
            Rotate secret
          </button>
          <button type="button" className="secondary" onClick={() => setMode("recover")}>
            Recover failed…
          </button>
          <button type="button" className="danger" onClick={() => setMode("confirm-delete")}>
            Delete…
          </button>
        </div>
      )}
    </li>
  );
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((value, i) => value === b[i]);
}
