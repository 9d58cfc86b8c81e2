import {
  disableFailingEndpoints,
  purgeOlderThan,
  runExclusively,
  type StoreDb,
  vacuumAnalyze,
} from "@hookline/store";

export interface MaintenanceDeps {
  db: StoreDb;
  now(): number;
  /** Endpoints whose attempts have all failed over this long are disabled. */
  disableAfterMs: number;
  /** Events, deliveries and attempts older than this are purged. */
  retentionMs: number;
  /** Embedded PGlite has no autovacuum, so maintenance vacuums and analyzes it. */
  vacuum?: boolean;
}

export interface MaintenanceResult {
  disabled: { tenantId: string; endpointId: string }[];
  purged: number;
  vacuumed: boolean;
}

/** Auto-disable and retention, run by one worker process at a time. */
export async function maintainOnce(deps: MaintenanceDeps): Promise<MaintenanceResult | undefined> {
  return runExclusively(deps.db, "maintenance", async () => {
    const now = deps.now();
    const disabled = await disableFailingEndpoints(
      deps.db,
      deps.disableAfterMs,
      `disabled automatically: every attempt failed for ${describe(deps.disableAfterMs)}`,
      new Date(now),
    );
    const purged = await purgeOlderThan(deps.db, new Date(now - deps.retentionMs));
    if (deps.vacuum) await vacuumAnalyze(deps.db);
    return { disabled, purged, vacuumed: deps.vacuum === true };
  });
}

function describe(ms: number): string {
  if (ms % 86_400_000 === 0) return `${ms / 86_400_000} day${ms === 86_400_000 ? "" : "s"}`;
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  if (ms % 1000 === 0) return `${ms / 1000} s`;
  return `${ms} ms`;
}
