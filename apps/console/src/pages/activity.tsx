import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { DeliveryStatus } from "@hookline/contracts";
import { type FormEvent, useCallback, useState } from "react";
import { useSession } from "../context.js";
import { usePagedList } from "../paged-list.js";
import { href } from "../route.js";
import { CopyId } from "../ui/copy-id.js";
import { Empty, ErrorBox, Loading } from "../ui/states.js";
import { DELIVERY_STATUS_LABEL, StatusBadge } from "../ui/status.js";
import { Time } from "../ui/time.js";
import { LiveView } from "./live-view.js";

interface Filters {
  status: DeliveryStatus;
  endpointId: string;
  eventId: string;
  eventType: string;
  from: string;
  until: string;
}

/** Deliveries with filters, paged, and the live attempt stream beside them. */
export function Activity({ initialEndpoint }: { initialEndpoint: string }) {
  const { api, tenantId, endpointId: scoped } = useSession();
  const blank: Filters = {
    status: DeliveryStatus.UNSPECIFIED,
    endpointId: scoped || initialEndpoint,
    eventId: "",
    eventType: "",
    from: "",
    until: "",
  };
  const [draft, setDraft] = useState<Filters>(blank);
  const [filters, setFilters] = useState<Filters>(blank);
  const [live, setLive] = useState(true);

  const fetchPage = useCallback(
    async (pageSize: number, pageToken: string, signal: AbortSignal) => {
      const page = await api.log.listDeliveries(
        {
          tenantId,
          status: filters.status,
          endpointId: filters.endpointId,
          eventId: filters.eventId,
          eventType: filters.eventType,
          ...(filters.from && { createdFrom: timestampFromDate(new Date(filters.from)) }),
          ...(filters.until && { createdUntil: timestampFromDate(new Date(filters.until)) }),
          pageSize,
          pageToken,
        },
        { signal },
      );
      return { items: page.deliveries, nextPageToken: page.nextPageToken };
    },
    [api, tenantId, filters],
  );
  const list = usePagedList(fetchPage, (d) => d.id);
  const deliveries = list.items;

  const apply = (event: FormEvent) => {
    event.preventDefault();
    setFilters(draft);
  };
  const field = (name: keyof Filters) => ({
    id: `filter-${name}`,
    value: String(draft[name]),
    onChange: (e: { target: { value: string } }) => setDraft({ ...draft, [name]: e.target.value }),
  });

  return (
    <div className="activity">
      <section aria-labelledby="live-title" className="live">
        <div className="title-row">
          <h1 id="live-title">Live attempts</h1>
          <label className="inline">
            <input type="checkbox" checked={live} onChange={(e) => setLive(e.target.checked)} /> live
          </label>
        </div>
        <LiveView
          enabled={live}
          filter={{ tenantId, endpointId: filters.endpointId, eventId: filters.eventId }}
          onNewAttempt={list.refresh}
        />
      </section>
      <section aria-labelledby="deliveries-title">
        <h2 id="deliveries-title">Deliveries</h2>
        <form className="filters" onSubmit={apply} aria-label="filters">
          <label htmlFor="filter-status">Status</label>
          <select
            id="filter-status"
            value={draft.status}
            onChange={(e) => setDraft({ ...draft, status: Number(e.target.value) as DeliveryStatus })}
          >
            {Object.entries(DELIVERY_STATUS_LABEL).map(([value, label]) => (
              <option key={value} value={value}>
                {value === "0" ? "any" : label}
              </option>
            ))}
          </select>
          <label htmlFor="filter-endpointId">Endpoint</label>
          <input {...field("endpointId")} disabled={scoped !== ""} placeholder="any" />
          <label htmlFor="filter-eventId">Event id</label>
          <input {...field("eventId")} placeholder="any" />
          <label htmlFor="filter-eventType">Event type</label>
          <input {...field("eventType")} placeholder="any" />
          <label htmlFor="filter-from">From</label>
          <input {...field("from")} type="datetime-local" />
          <label htmlFor="filter-until">Until</label>
          <input {...field("until")} type="datetime-local" />
          <button type="submit">Apply</button>
        </form>
        {list.error && <ErrorBox message={list.error} onRetry={list.refresh} />}
        {!list.error && deliveries === undefined && <Loading what="deliveries" />}
        {deliveries?.length === 0 && (
          <Empty>
            <p>
              No deliveries match. Deliveries appear when an event is emitted for an endpoint subscribed to
              its type
              {scoped === "" && (
                <>
                  : try <a href={href("send")}>sending a test event</a>
                </>
              )}
              , or widen the filters.
            </p>
          </Empty>
        )}
        {deliveries && deliveries.length > 0 && (
          <div className="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Created</th>
                  <th scope="col">Status</th>
                  <th scope="col">Event</th>
                  <th scope="col">Endpoint</th>
                  <th scope="col">Attempts</th>
                  <th scope="col">Delivery</th>
                </tr>
              </thead>
              <tbody>
                {deliveries.map((d) => (
                  <tr key={d.id}>
                    <td>
                      <Time value={d.createdAt} />
                    </td>
                    <td>
                      <StatusBadge status={d.status} />
                    </td>
                    <td>
                      <CopyId value={d.eventId} label="event id" />
                    </td>
                    <td>
                      <CopyId value={d.endpointId} label="endpoint id" />
                    </td>
                    <td>{d.attemptCount}</td>
                    <td>
                      <a href={href("delivery", d.id)}>Open</a>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        {list.more && (
          <button type="button" className="secondary" onClick={list.loadMore}>
            Load more
          </button>
        )}
      </section>
    </div>
  );
}
