import { Code, ConnectError } from "@connectrpc/connect";

/**
 * Slots for Health.Watch streams, a pool apart from WatchAttempts' (StreamLimiter). Health needs no
 * token, so anyone who can reach the port may watch it: counted in the server-wide stream total,
 * such peers could fill it and have every tenant's WatchAttempts refused.
 */
export class HealthWatchSlots {
  private taken = 0;

  constructor(private readonly max: number) {}

  /** Takes a slot, or throws RESOURCE_EXHAUSTED naming the limit; returns the release (once). */
  acquire(): () => void {
    if (this.taken >= this.max) {
      throw new ConnectError(
        `the server has ${this.max} health watches open, its limit (HOOKLINE_MAX_HEALTH_WATCHES); try again later`,
        Code.ResourceExhausted,
      );
    }
    this.taken += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.taken -= 1;
    };
  }

  /** Health watches open now. */
  get open(): number {
    return this.taken;
  }
}
