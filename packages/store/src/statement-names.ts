/**
 * Prepared statement names for the clients of the one PGlite session (see PGliteServer). On a
 * real server each connection is a session and names its statements for itself; here every
 * connection shares one session, so two connections preparing "record" would collide (the second
 * Parse fails: the statement already exists), and a statement outlives the connection that made
 * it. Each client's names are therefore given its own prefix on the way in, in the messages that
 * name a statement (Parse, Bind, and a Describe or Close of a statement), and the names a client
 * made are handed back when it goes, to deallocate. Unnamed statements, all that BullMQ and most
 * of the store send, pass untouched. A DEALLOCATE written in SQL is not rewritten.
 */
export class StatementNames {
  /** The session names each client's Parse messages made. */
  private readonly made = new Map<number, Set<string>>();

  /** The message with its statement name, if any, made the client's own. */
  rewrite(client: number, message: Buffer): Buffer {
    switch (message[0]) {
      case PARSE:
        return this.renamed(client, message, NAME_AT, true);
      case BIND: {
        const portalEnd = message.indexOf(0, NAME_AT);
        return this.renamed(client, message, portalEnd + 1, false);
      }
      case DESCRIBE:
      case CLOSE:
        return message[NAME_AT] === STATEMENT ? this.renamed(client, message, NAME_AT + 1, false) : message;
      default:
        return message;
    }
  }

  /** Forgets the client's statements, returning their session names (to deallocate). */
  release(client: number): string[] {
    const names = [...(this.made.get(client) ?? [])];
    this.made.delete(client);
    return names;
  }

  private renamed(client: number, message: Buffer, at: number, parse: boolean): Buffer {
    const end = message.indexOf(0, at);
    if (end <= at) return message;
    const name = `${client}/${message.toString("utf8", at, end)}`;
    if (parse) {
      let names = this.made.get(client);
      if (!names) {
        names = new Set();
        this.made.set(client, names);
      }
      names.add(name);
    }
    const renamed = Buffer.from(name, "utf8");
    const out = Buffer.concat([message.subarray(0, at), renamed, message.subarray(end)]);
    out.writeInt32BE(out.length - 1, 1);
    return out;
  }
}

// Message types (frontend), and where a message's first string begins: after its type byte and length.
const PARSE = 0x50; // 'P'
const BIND = 0x42; // 'B'
const DESCRIBE = 0x44; // 'D'
const CLOSE = 0x43; // 'C'
const STATEMENT = 0x53; // 'S': a Describe or Close of a statement, not a portal
const NAME_AT = 5;
