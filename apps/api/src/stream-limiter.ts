import { Code, ConnectError } from "@connectrpc/connect";

/**
 * Counts long-lived streams (WatchAttempts, Health.Watch), per API token and in total, so that
 * callers cannot hold unbounded memory by opening streams they never read.
 */
export class StreamLimiter {
  private total = 0;
  private readonly byToken = new Map<string, number>();

  constructor(private readonly limits: { perToken: number; total: number }) {}

  /**
   * Takes a slot for one stream, or throws RESOURCE_EXHAUSTED naming the limit. `tokenId` is
   * undefined for callers without a token (health, or no authentication): only the total applies.
   * Returns the release function (calling it twice releases once).
   */
  acquire(tokenId: string | undefined): () => void {
    if (this.total >= this.limits.total) {
      throw new ConnectError(
        `the server has ${this.limits.total} streams open, its limit (HOOKLINE_MAX_STREAMS); try again later`,
        Code.ResourceExhausted,
      );
    }
    const mine = tokenId === undefined ? 0 : (this.byToken.get(tokenId) ?? 0);
    if (tokenId !== undefined && mine >= this.limits.perToken) {
      throw new ConnectError(
        `this token has ${this.limits.perToken} streams open, its limit (HOOKLINE_MAX_STREAMS_PER_TOKEN); close one first`,
        Code.ResourceExhausted,
      );
    }
    this.total += 1;
    if (tokenId !== undefined) this.byToken.set(tokenId, mine + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.total -= 1;
      if (tokenId === undefined) return;
      const left = (this.byToken.get(tokenId) ?? 1) - 1;
      if (left === 0) this.byToken.delete(tokenId);
      else this.byToken.set(tokenId, left);
    };
  }

  /** Streams open now. */
  get open(): number {
    return this.total;
  }
}
