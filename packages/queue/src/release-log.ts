/** How long a release is remembered against reads that began before it. */
const RELEASE_MEMORY_MS = 60_000;

/**
 * Which queues this consumer closed, in order, so that a read of the store begun before a close
 * is not taken as news that the closed queue has work (see DeliveryConsumer.readMark).
 */
export class ReleaseLog {
  /** Queues released so far; a read's mark is this count when it began. */
  private releases = 0;
  /** Each closed queue's last release number and time, oldest release first. */
  private readonly released = new Map<string, { release: number; at: number }>();
  private lastPrunedAt = 0;

  mark(): number {
    return this.releases;
  }

  release(queue: string, now: number): void {
    this.releases += 1;
    // Deleted first, so the map stays in release order (see prune).
    this.released.delete(queue);
    this.released.set(queue, { release: this.releases, at: now });
  }

  /** The queue is open again: no earlier release of it matters. */
  reopened(queue: string): void {
    this.released.delete(queue);
  }

  releasedAfter(queue: string, mark: number): boolean {
    const released = this.released.get(queue);
    return released !== undefined && released.release > mark;
  }

  /**
   * Forgets releases older than any read still running could be (a read that slow only opens a
   * queue for nothing). Entries are in release order, so this stops at the first one kept.
   */
  prune(now: number): void {
    if (now - this.lastPrunedAt < RELEASE_MEMORY_MS / 4) return;
    this.lastPrunedAt = now;
    for (const [queue, { at }] of this.released) {
      if (now - at < RELEASE_MEMORY_MS) break;
      this.released.delete(queue);
    }
  }
}
