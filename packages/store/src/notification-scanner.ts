/** PostgreSQL's NotificationResponse message type: 'A'. */
const NOTIFICATION = 0x41;
const HEADER = 5;

/**
 * Finds NotificationResponse messages in a backend's output, however that output is cut into
 * chunks. Everything else is skipped by its length, never copied.
 */
export class NotificationScanner {
  /** The first bytes of a message header that a chunk cut short. */
  private header: Buffer | undefined;
  /** Bytes of the current message still to come. */
  private remaining = 0;
  /** The current message's bytes so far, when it is a notification. */
  private notification: Buffer[] | undefined;

  constructor(private readonly found: (message: Buffer) => void) {}

  /** Reads one chunk (a buffer the caller owns: parts of it are kept). */
  scan(chunk: Buffer): void {
    let i = 0;
    while (i < chunk.length) {
      if (this.remaining > 0) {
        const take = Math.min(this.remaining, chunk.length - i);
        this.notification?.push(chunk.subarray(i, i + take));
        this.remaining -= take;
        i += take;
        if (this.remaining === 0) this.finishMessage();
        continue;
      }
      let header: Buffer;
      if (this.header === undefined && chunk.length - i >= HEADER) {
        header = chunk.subarray(i, i + HEADER);
        i += HEADER;
      } else {
        const have = this.header ?? Buffer.alloc(0);
        const part = chunk.subarray(i, i + HEADER - have.length);
        i += part.length;
        this.header = Buffer.concat([have, part]);
        if (this.header.length < HEADER) return;
        header = this.header;
        this.header = undefined;
      }
      // The length counts itself (4 bytes) but not the type byte.
      this.remaining = header.readInt32BE(1) - 4;
      this.notification = header[0] === NOTIFICATION ? [Buffer.from(header)] : undefined;
      if (this.remaining === 0) this.finishMessage();
    }
  }

  private finishMessage(): void {
    if (this.notification) this.found(Buffer.concat(this.notification));
    this.notification = undefined;
  }
}

/** The channel a NotificationResponse message names (after its header and the sender's pid). */
export function notificationChannel(message: Buffer): string {
  const start = HEADER + 4;
  const end = message.indexOf(0, start);
  return message.toString("utf8", start, end < 0 ? message.length : end);
}
