import type { Endpoint } from "@hookline/contracts";
import { useCallback, useState } from "react";
import { errorText } from "../api.js";
import { useSession } from "../context.js";
import { usePagedList } from "../paged-list.js";
import { Empty, ErrorBox, Loading } from "../ui/states.js";
import { type EndpointFields, EndpointForm } from "./endpoint-form.js";
import { EndpointRow } from "./endpoint-row.js";

/** The tenant's endpoints, and a form to add one. */
export function Endpoints() {
  const { api, tenantId, endpointId } = useSession();
  const [adding, setAdding] = useState(false);

  const fetchPage = useCallback(
    async (pageSize: number, pageToken: string, signal: AbortSignal) => {
      const page = await api.endpoints.listEndpoints({ tenantId, pageSize, pageToken }, { signal });
      return { items: page.endpoints, nextPageToken: page.nextPageToken };
    },
    [api, tenantId],
  );
  const list = usePagedList(fetchPage, (e) => e.id);
  const endpoints = list.items;

  const create = async (fields: EndpointFields) => {
    let created: Endpoint | undefined;
    try {
      ({ endpoint: created } = await api.endpoints.createEndpoint({
        tenantId,
        url: fields.url,
        description: fields.description,
        eventTypes: fields.eventTypes,
        ...(fields.maxInFlight !== undefined && { maxInFlight: fields.maxInFlight }),
        ...(fields.rateLimitPerSecond !== undefined && { rateLimitPerSecond: fields.rateLimitPerSecond }),
      }));
    } catch (e) {
      throw new Error(errorText(e));
    }
    setAdding(false);
    // Shown at once after the pages already loaded (it is the newest), which stay as they are.
    if (created) list.add({ ...created, secret: "" });
  };
  const replace = (updated: Endpoint) =>
    list.update((old) => old.map((e) => (e.id === updated.id ? { ...updated, secret: "" } : e)));
  const remove = (id: string) => list.update((old) => old.filter((e) => e.id !== id));

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
      {list.error && <ErrorBox message={list.error} onRetry={list.refresh} />}
      {!list.error && endpoints === undefined && <Loading what="endpoints" />}
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
      {list.more && (
        <button type="button" className="secondary" onClick={list.loadMore}>
          Load more
        </button>
      )}
    </section>
  );
}
