import { type FormEvent, useEffect, useState } from "react";
import { useSession } from "./context.js";
import { Activity } from "./pages/activity.js";
import { DeliveryDetail } from "./pages/delivery-detail.js";
import { Endpoints } from "./pages/endpoints.js";
import { SendTest } from "./pages/send-test.js";
import { href, useRoute } from "./route.js";
import { Empty } from "./ui/states.js";

/** Navigation, the tenant in view, and the current page. */
export function Shell({ onSignOut, onTenant }: { onSignOut(): void; onTenant(tenantId: string): void }) {
  const session = useSession();
  const route = useRoute();
  const pages = [
    { page: "activity", label: "Activity" },
    { page: "endpoints", label: "Endpoints" },
    ...(session.endpointId === "" ? [{ page: "send", label: "Send test event" }] : []),
  ];
  return (
    <>
      <header className="top">
        <a className="brand" href={href("activity")}>
          Hookline{session.portal ? " portal" : ""}
        </a>
        <nav aria-label="pages">
          {pages.map((p) => (
            <a key={p.page} href={href(p.page)} aria-current={route.page === p.page ? "page" : undefined}>
              {p.label}
            </a>
          ))}
        </nav>
        {session.tenantFixed ? (
          <span className="tenant" data-testid="tenant">
            tenant <code>{session.tenantId}</code>
            {session.endpointId && (
              <>
                {" "}
                · endpoint <code>{session.endpointId}</code>
              </>
            )}
          </span>
        ) : (
          <TenantPicker value={session.tenantId} onChange={onTenant} />
        )}
        {!session.portal && !session.open && (
          <button type="button" className="link" onClick={onSignOut}>
            Sign out
          </button>
        )}
      </header>
      <main>
        {session.tenantId === "" ? (
          <Empty>
            <p>This token may see every tenant. Enter a tenant id above to see its endpoints and activity.</p>
          </Empty>
        ) : (
          <Page page={route.page} arg={route.arg} scoped={session.endpointId !== ""} />
        )}
      </main>
    </>
  );
}

// Pages are keyed by their argument: another delivery or endpoint filter is a fresh page, not the
// previous one's state (its filters, its notices) under a new address.
function Page({ page, arg, scoped }: { page: string; arg: string; scoped: boolean }) {
  switch (page) {
    case "endpoints":
      return <Endpoints />;
    case "delivery":
      return <DeliveryDetail key={arg} deliveryId={arg} />;
    case "send":
      // An endpoint-scoped link may not emit (the api refuses it), so there is no form to show.
      return scoped ? <GoTo page="activity" /> : <SendTest />;
    default: {
      const endpoint = page === "activity" ? arg : "";
      return <Activity key={endpoint} initialEndpoint={endpoint} />;
    }
  }
}

/** Replaces the address (no history entry), so Back does not return to a page that sends here. */
function GoTo({ page }: { page: string }) {
  useEffect(() => window.location.replace(href(page)), [page]);
  return null;
}

function TenantPicker({ value, onChange }: { value: string; onChange(tenantId: string): void }) {
  const [text, setText] = useState(value);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    onChange(text.trim());
  };
  return (
    <form className="tenant" onSubmit={submit}>
      <label htmlFor="tenant-input">Tenant</label>
      <input id="tenant-input" value={text} onChange={(e) => setText(e.target.value)} size={14} />
      <button type="submit">Show</button>
    </form>
  );
}
