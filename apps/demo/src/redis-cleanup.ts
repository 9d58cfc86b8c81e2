import { parseRedisUrl } from "@hookline/config";
import { Redis } from "ioredis";

/** Deletes every key under `prefix:` on the Redis of redisUrl (the demo's own queues); returns how many. */
export async function removeRedisPrefix(redisUrl: string, prefix: string): Promise<number> {
  const redis = new Redis({ ...parseRedisUrl(redisUrl), lazyConnect: true, maxRetriesPerRequest: 1 });
  redis.on("error", () => {}); // failures surface on the commands below
  try {
    await redis.connect();
    let removed = 0;
    let cursor = "0";
    do {
      const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 500);
      cursor = next;
      if (keys.length > 0) removed += await redis.unlink(...keys);
    } while (cursor !== "0");
    return removed;
  } finally {
    redis.disconnect();
  }
}
