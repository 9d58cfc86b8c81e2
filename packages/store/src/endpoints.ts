import { type Kysely, type Selectable, sql } from "kysely";
import { cancelUnboundPendingOf, type DeletedEndpoint } from "./endpoint-backlog.js";
import { AlreadyExistsError, isUniqueViolation, NotFoundError, QuotaExceededError } from "./errors.js";
import { decodePageToken, pageOf, pageScope } from "./page-token.js";
import { LOCK_KEYS } from "./pg-plumbing/locks.js";
import type { Database, EndpointStatusValue, EndpointTable } from "./schema.js";

export interface EndpointRecord {
  tenantId: string;
  id: string;
  url: string;
  description: string;
  eventTypes: string[];
  status: EndpointStatusValue;
  disabledReason: string;
  secret: string;
  /** Null: the service default. */
  maxInFlight: number | null;
  /** Null: no limit. */
  rateLimitPerSecond: number | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface NewEndpoint {
  tenantId: string;
  id: string;
  url: string;
  description: string;
  eventTypes: string[];
  secret: string;
  maxInFlight?: number | null;
  rateLimitPerSecond?: number | null;
}

/** Fields to change; undefined leaves a field as it is, null returns a limit to its default. */
export interface EndpointPatch {
  url?: string;
  description?: string;
  eventTypes?: string[];
  status?: EndpointStatusValue;
  maxInFlight?: number | null;
  rateLimitPerSecond?: number | null;
}

/**
 * Creates an endpoint, unless its tenant already has `maxPerTenant` (QuotaExceededError). The
 * count and the insert run under a per-tenant transaction lock, so concurrent creates cannot
 * overshoot the quota together.
 */
export async function createEndpoint(
  db: Kysely<Database>,
  input: NewEndpoint,
  now: Date,
  maxPerTenant = Number.POSITIVE_INFINITY,
): Promise<EndpointRecord> {
  try {
    return await db.transaction().execute(async (tx) => {
      await sql`select pg_advisory_xact_lock(${LOCK_KEYS.endpointQuota}, hashtext(${input.tenantId}))`.execute(
        tx,
      );
      const { count } = await tx
        .selectFrom("endpoints")
        .select((eb) => eb.fn.countAll<string>().as("count"))
        .where("tenant_id", "=", input.tenantId)
        .executeTakeFirstOrThrow();
      if (Number(count) >= maxPerTenant) throw new QuotaExceededError("endpoints per tenant", maxPerTenant);
      return insertEndpoint(tx, input, now);
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw new AlreadyExistsError(`endpoint "${input.id}"`);
    throw error;
  }
}

async function insertEndpoint(db: Kysely<Database>, input: NewEndpoint, now: Date): Promise<EndpointRecord> {
  const row = await db
    .insertInto("endpoints")
    .values({
      tenant_id: input.tenantId,
      id: input.id,
      url: input.url,
      description: input.description,
      event_types: input.eventTypes,
      status: "enabled",
      disabled_reason: "",
      secret: input.secret,
      max_in_flight: input.maxInFlight ?? null,
      rate_limit_per_second: input.rateLimitPerSecond ?? null,
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return toEndpoint(row);
}

/** One endpoint of a tenant, or NotFoundError. */
export async function getEndpoint(
  db: Kysely<Database>,
  tenantId: string,
  id: string,
): Promise<EndpointRecord> {
  const endpoint = await findEndpoint(db, tenantId, id);
  if (!endpoint) throw new NotFoundError(`endpoint "${id}"`);
  return endpoint;
}

/** One endpoint of a tenant, or undefined: for callers to whom a missing endpoint is an answer. */
export async function findEndpoint(
  db: Kysely<Database>,
  tenantId: string,
  id: string,
): Promise<EndpointRecord | undefined> {
  const row = await db
    .selectFrom("endpoints")
    .selectAll()
    .where("tenant_id", "=", tenantId)
    .where("id", "=", id)
    .executeTakeFirst();
  return row && toEndpoint(row);
}

export async function listEndpoints(
  db: Kysely<Database>,
  tenantId: string,
  pageSize: number,
  pageToken: string,
): Promise<{ items: EndpointRecord[]; nextPageToken: string }> {
  const scope = pageScope("endpoints", { tenantId });
  const after = decodePageToken(pageToken, scope);
  let query = db.selectFrom("endpoints").selectAll().where("tenant_id", "=", tenantId);
  if (after !== undefined) query = query.where("seq", ">", after);
  const rows = await query
    .orderBy("seq")
    .limit(pageSize + 1)
    .execute();
  const page = pageOf(rows, pageSize, (row) => row.seq, scope);
  return { items: page.items.map(toEndpoint), nextPageToken: page.nextPageToken };
}

export async function updateEndpoint(
  db: Kysely<Database>,
  tenantId: string,
  id: string,
  patch: EndpointPatch,
  now: Date,
): Promise<EndpointRecord> {
  const row = await db
    .updateTable("endpoints")
    .set({
      updated_at: now,
      ...(patch.url !== undefined && { url: patch.url }),
      ...(patch.description !== undefined && { description: patch.description }),
      ...(patch.eventTypes !== undefined && { event_types: patch.eventTypes }),
      ...(patch.maxInFlight !== undefined && { max_in_flight: patch.maxInFlight }),
      ...(patch.rateLimitPerSecond !== undefined && { rate_limit_per_second: patch.rateLimitPerSecond }),
      ...(patch.status !== undefined && {
        status: patch.status,
        disabled_reason: patch.status === "enabled" ? "" : "disabled through the API",
        // Re-enabling starts a fresh record for auto-disable.
        ...(patch.status === "enabled" && { failing_since: null }),
      }),
    })
    .where("tenant_id", "=", tenantId)
    .where("id", "=", id)
    .returningAll()
    .executeTakeFirst();
  if (!row) throw new NotFoundError(`endpoint "${id}"`);
  return toEndpoint(row);
}

/**
 * Deletes an endpoint row and returns it, for cancelPendingOf to cancel its pending deliveries
 * next, a page at a time. Until then a worker that takes one finds its endpoint gone and cancels
 * it without a request; those that match the id alone are cancelled here, with the row.
 */
export async function deleteEndpoint(
  db: Kysely<Database>,
  tenantId: string,
  id: string,
  now: Date,
): Promise<DeletedEndpoint> {
  return db.transaction().execute(async (tx) => {
    // Deliveries before the endpoint row, the order recording attempts takes them in (it locks its
    // deliveries, then updates their endpoints' runs of failures): the other way round, each could
    // hold a row the other waits for. Checked first, unlocked, so that a delete retried while the
    // first one's cancel pages run answers NotFound at once rather than after a walk of the backlog.
    const exists = await tx
      .selectFrom("endpoints")
      .select("seq")
      .where("tenant_id", "=", tenantId)
      .where("id", "=", id)
      .executeTakeFirst();
    if (!exists) throw new NotFoundError(`endpoint "${id}"`);
    const cancelledWithRow = await cancelUnboundPendingOf(tx, tenantId, id, now);
    const row = await tx
      .deleteFrom("endpoints")
      .where("tenant_id", "=", tenantId)
      .where("id", "=", id)
      .returning("seq")
      .executeTakeFirst();
    if (!row) throw new NotFoundError(`endpoint "${id}"`);
    return { tenantId, endpointId: id, seq: row.seq, cancelledWithRow };
  });
}

function toEndpoint(row: Selectable<EndpointTable>): EndpointRecord {
  return {
    tenantId: row.tenant_id,
    id: row.id,
    url: row.url,
    description: row.description,
    eventTypes: row.event_types,
    status: row.status,
    disabledReason: row.disabled_reason,
    secret: row.secret,
    maxInFlight: row.max_in_flight,
    rateLimitPerSecond: row.rate_limit_per_second,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/**
 * Previous secrets that keep signing at once, the most recently retired. Every attempt carries a
 * signature per live secret: without a bound, rotations in a loop grew the header past what
 * receivers accept (431) and had the worker compute hundreds of HMACs per attempt, on the core
 * every tenant's deliveries share.
 */
export const MAX_PREVIOUS_SECRETS = 4;

/**
 * Makes newSecret the signing secret. The old one keeps signing until now + graceMs, as do the
 * previous ones still in their grace, up to MAX_PREVIOUS_SECRETS (the longest retired go first). A
 * grace of 0 retires every previous secret at once (a leaked secret must stop signing now).
 */
export async function rotateEndpointSecret(
  db: Kysely<Database>,
  tenantId: string,
  id: string,
  newSecret: string,
  graceMs: number,
  now: Date,
): Promise<EndpointRecord> {
  return db.transaction().execute(async (tx) => {
    const current = await tx
      .selectFrom("endpoints")
      .select(["secret", "previous_secrets", "secret_since", "created_at"])
      .where("tenant_id", "=", tenantId)
      .where("id", "=", id)
      .forUpdate()
      .executeTakeFirst();
    if (!current) throw new NotFoundError(`endpoint "${id}"`);
    const stillLive = graceMs > 0 ? current.previous_secrets.filter((p) => new Date(p.expires_at) > now) : [];
    const retired =
      graceMs > 0
        ? [
            {
              secret: current.secret,
              since: (current.secret_since ?? current.created_at).toISOString(),
              expires_at: new Date(now.getTime() + graceMs).toISOString(),
            },
          ]
        : [];
    const row = await tx
      .updateTable("endpoints")
      .set({
        secret: newSecret,
        secret_since: now,
        previous_secrets: JSON.stringify([...stillLive, ...retired].slice(-MAX_PREVIOUS_SECRETS)),
        updated_at: now,
      })
      .where("tenant_id", "=", tenantId)
      .where("id", "=", id)
      .returningAll()
      .executeTakeFirstOrThrow();
    return toEndpoint(row);
  });
}

/**
 * The limits and URLs of these endpoints (deleted ones are left out): workers re-read them for the
 * queues they serve.
 */
export async function endpointLimits(
  db: Kysely<Database>,
  endpoints: readonly { tenantId: string; endpointId: string }[],
): Promise<
  {
    tenantId: string;
    endpointId: string;
    maxInFlight: number | null;
    rateLimitPerSecond: number | null;
    url: string;
  }[]
> {
  if (endpoints.length === 0) return [];
  const { rows } = await sql<{
    tenant_id: string;
    id: string;
    max_in_flight: number | null;
    rate_limit_per_second: number | null;
    url: string;
  }>`
    select ep.tenant_id, ep.id, ep.max_in_flight, ep.rate_limit_per_second, ep.url
      from hookline.endpoints ep
      join unnest(${endpoints.map((e) => e.tenantId)}::text[], ${endpoints.map((e) => e.endpointId)}::text[]) as x(t, i)
        on ep.tenant_id = x.t and ep.id = x.i`.execute(db);
  return rows.map((row) => ({
    tenantId: row.tenant_id,
    endpointId: row.id,
    maxInFlight: row.max_in_flight,
    rateLimitPerSecond: row.rate_limit_per_second,
    url: row.url,
  }));
}
