/**
 * Items kept in the order their attempts started (a binary min-heap on startedAt), while they
 * arrive in the order their answers came back. The limiter takes out, on every answer, those that
 * started before some time: a scan of all of them would cost thousands of steps per answer for an
 * endpoint answering a thousand a second with a slow tail of seconds.
 */
export class StartOrder<T extends { startedAt: number }> {
  private readonly items: T[] = [];

  get size(): number {
    return this.items.length;
  }

  add(item: T): void {
    const items = this.items;
    items.push(item);
    let child = items.length - 1;
    while (child > 0) {
      const parent = (child - 1) >> 1;
      if (this.startOf(parent) <= item.startedAt) break;
      items[child] = items[parent] as T;
      child = parent;
    }
    items[child] = item;
  }

  /** Removes and returns, earliest first, the items started before `time`. */
  takeStartedBefore(time: number): T[] {
    const taken: T[] = [];
    while (this.items.length > 0 && this.startOf(0) < time) taken.push(this.removeFirst());
    return taken;
  }

  private removeFirst(): T {
    const items = this.items;
    const first = items[0] as T;
    const last = items.pop() as T;
    if (items.length === 0) return first;
    let parent = 0;
    for (;;) {
      const left = parent * 2 + 1;
      if (left >= items.length) break;
      const right = left + 1;
      const earlier = right < items.length && this.startOf(right) < this.startOf(left) ? right : left;
      if (this.startOf(earlier) >= last.startedAt) break;
      items[parent] = items[earlier] as T;
      parent = earlier;
    }
    items[parent] = last;
    return first;
  }

  private startOf(index: number): number {
    return (this.items[index] as T).startedAt;
  }
}
