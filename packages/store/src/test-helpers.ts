import { createTestBackend, type TestBackend, type TestSettings } from "@hookline/testkit";
import { connectStore, type StoreConnection } from "./connect.js";

/** Opens a fresh store on the backend this run tests; close() also drops it. */
export async function openTestStore(
  settings: TestSettings,
): Promise<StoreConnection & { backend: TestBackend }> {
  const backend = await createTestBackend(settings);
  const store = await connectStore(
    backend.databaseUrl ? { databaseUrl: backend.databaseUrl } : { dataDir: null },
  );
  return {
    ...store,
    backend,
    db: store.db,
    async close() {
      await store.close();
      await backend.dispose();
    },
  };
}
