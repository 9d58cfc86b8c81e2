import { Code, ConnectError } from "@connectrpc/connect";

/** Whose stream it is: the token it came with and the tenant that token acts on, when any. */
export interface StreamOwner {
  tokenId?: string | undefined;
  tenantId: string | undefined;
}

/**
 * Counts WatchAttempts streams, per API token, per tenant and in
 * total, so that callers cannot hold unbounded memory by opening streams they never read. The
 * tenant's count matters because a tenant can issue itself portal links, each a token of its own:
 * without it, one tenant held every stream of the server, and others' were refused.
 */
export class StreamLimiter {
  private total = 0;
  private readonly byToken = new Map<string, number>();
  private readonly byTenant = new Map<string, number>();

  constructor(private readonly limits: { perToken: number; perTenant: number; total: number }) {}

  /**
   * Takes a slot for one stream, or throws RESOURCE_EXHAUSTED naming the limit. A caller without
   * a token (no authentication) counts only in the total, an admin token (every
   * tenant) in its token's count and the total. Returns the release function (calling it twice
   * releases once).
   */
  acquire(owner: StreamOwner): () => void {
    if (this.total >= this.limits.total) {
      throw new ConnectError(
        `the server has ${this.limits.total} streams open, its limit (HOOKLINE_MAX_STREAMS); try again later`,
        Code.ResourceExhausted,
      );
    }
    if (owner.tokenId !== undefined && count(this.byToken, owner.tokenId) >= this.limits.perToken) {
      throw new ConnectError(
        `this token has ${this.limits.perToken} streams open, its limit (HOOKLINE_MAX_STREAMS_PER_TOKEN); close one first`,
        Code.ResourceExhausted,
      );
    }
    const tenantId = owner.tokenId === undefined ? undefined : owner.tenantId;
    if (tenantId !== undefined && count(this.byTenant, tenantId) >= this.limits.perTenant) {
      throw new ConnectError(
        `this tenant has ${this.limits.perTenant} streams open across its tokens and portal links, its limit (HOOKLINE_MAX_STREAMS_PER_TENANT); close one first`,
        Code.ResourceExhausted,
      );
    }
    this.total += 1;
    if (owner.tokenId !== undefined) add(this.byToken, owner.tokenId, 1);
    if (tenantId !== undefined) add(this.byTenant, tenantId, 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.total -= 1;
      if (owner.tokenId !== undefined) add(this.byToken, owner.tokenId, -1);
      if (tenantId !== undefined) add(this.byTenant, tenantId, -1);
    };
  }

  /** Streams open now. */
  get open(): number {
    return this.total;
  }
}

function count(counts: Map<string, number>, key: string): number {
  return counts.get(key) ?? 0;
}

/** Adds to a count, forgetting it at zero so the map holds only owners with streams open. */
function add(counts: Map<string, number>, key: string, delta: number): void {
  const next = count(counts, key) + delta;
  if (next <= 0) counts.delete(key);
  else counts.set(key, next);
}
