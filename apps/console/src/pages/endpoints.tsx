import type { Endpoint } from "@hookline/contracts";
import { useCallback, useEffect, useState } from "react";
import { errorText } from "../api.js";
import { useSession } from "../context.js";
import { Empty, ErrorBox, Loading } from "../ui/states.js";
import { type EndpointFields, EndpointForm } from "./endpoint-form.js";
import { EndpointRow } from "./endpoint-row.js";

/** The tenant's endpoints, and a form to add one. */
export function Endpoints() {
  const { api, tenantId, endpointId } = useSession();
  const [endpoints, setEndpoints] = useState<Endpoint[] | undefined>();
  const [next, setNext] = useState("");
  const [error, setError] = useState("");
  const [adding, setAdding] = useState(false);

  const load = useCallback(
    async (pageToken = "") => {
      setError("");
      try {
        const page = await api.endpoints.listEndpoints({ tenantId, pageSize: 50, pageToken });
        setEndpoints((old) => (pageToken ? [...(old ?? []), ...page.endpoints] : page.endpoints));
        setNext(page.nextPageToken);
      } catch (e) {
        setError(errorText(e));
      }
    },
    [api, tenantId],
  );
  useEffect(() => {
    setEndpoints(undefined);
    void load();
  }, [load]);

  const create = async (fields: EndpointFields) => {
    try {
      await api.endpoints.createEndpoint({
        tenantId,
        url: fields.url,
        description: fields.description,
        eventTypes: fields.eventTypes,
        ...(fields.maxInFlight !== undefined && { maxInFlight: fields.maxInFlight }),
        ...(fields.rateLimitPerSecond !== undefined && { rateLimitPerSecond: fields.rateLimitPerSecond }),
      });
    } catch (e) {
      throw new Error(errorText(e));
    }
    setAdding(false);
    await load();
  };
  const replace = (updated: Endpoint) =>
    setEndpoints((old) => old?.map((e) => (e.id === updated.id ? { ...updated, secret: "" } : e)));
  const remove = (id: string) => setEndpoints((old) => old?.filter((e) => e.id !== id));

  return (
    <section aria-labelledby="endpoints-title">
      <div className="title-row">
        <h1 id="endpoints-title">Endpoints</h1>
        {endpointId === "" && !adding && (
          <button type="button" onClick={() => setAdding(true)}>
            Add endpoint
          </button>
        )}
      </div>
      {adding && (
        <EndpointForm submitLabel="Create endpoint" onSubmit={create} onCancel={() => setAdding(false)} />
      )}
      {error && <ErrorBox message={error} onRetry={() => load()} />}
      {!error && endpoints === undefined && <Loading what="endpoints" />}
      {endpoints?.length === 0 && (
        <Empty>
          <p>No endpoints yet. Add one with the URL that should receive this tenant's webhooks.</p>
        </Empty>
      )}
      {endpoints && endpoints.length > 0 && (
        <ul className="endpoints">
          {endpoints.map((endpoint) => (
            <EndpointRow key={endpoint.id} endpoint={endpoint} onChange={replace} onDeleted={remove} />
          ))}
        </ul>
      )}
      {next && (
        <button type="button" className="secondary" onClick={() => load(next)}>
          Load more
        </button>
      )}
    </section>
  );
}
