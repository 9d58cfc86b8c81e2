import net from "node:net";
import type { PGlite } from "@electric-sql/pglite";
import { NotificationScanner, notificationChannel } from "./notification-scanner.js";

/**
 * PGlite syncs its filesystem after every message unless told not to, through a mutex: a few
 * promise turns per statement, about 3 of the 13 us a `select $1` took in the engine. That sync is
 * for browser storage (IndexedDB, OPFS); on the filesystems opened here, a data directory (NodeFS)
 * or memory, it does nothing, so leaving it out changes nothing that is written.
 */
const NO_FS_SYNC = { syncToFs: false } as const;

// Startup-phase request codes (messages without a type byte).
const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;
const CANCEL_REQUEST = 80877102;

/**
 * Serves one PGlite session to many `pg` connections on a Unix socket (never TCP: PostgreSQL's
 * wire protocol here has no authentication, so only the owner of the socket's directory may reach it).
 *
 * PGlite is ONE PostgreSQL session, so two connections must never interleave inside each other's
 * work. pglite-socket (which we used first) queues single protocol messages, so one client's
 * Parse/Bind/Execute could interleave with another's outside transactions and bind the wrong
 * statement (seen as rows that "vanished" under load). Here each client's messages run as one
 * unit up to its Sync or Query, and a client with an open transaction owns the session until it
 * ends it (or disconnects, which rolls it back).
 *
 * LISTEN and NOTIFY: the one session listens for every client that asked, and PostgreSQL hands a
 * notification to the session at the end of whichever client's transaction sent it, in that
 * client's output. Each notification is therefore also passed on to the other clients that
 * listen on its channel, so BullMQ's workers wake when a job is added, as on a real server,
 * instead of on their next poll.
 */
export class PGliteServer {
  private readonly server: net.Server;
  private owner: number | undefined;
  private readonly waiting: { client: number; run: () => Promise<void> }[] = [];
  private running = false;
  private nextClient = 1;
  private readonly clients = new Map<number, net.Socket>();
  /** Channel to the clients listening on it. */
  private readonly listeners = new Map<string, Set<number>>();

  constructor(private readonly pglite: PGlite) {
    this.server = net.createServer((socket) => this.accept(socket));
  }

  /** Listens on the Unix socket at `path`; its directory decides who may connect. */
  async listen(path: string): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(path, () => resolve());
    });
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      for (const socket of this.sockets) socket.destroy();
    });
  }

  private readonly sockets = new Set<net.Socket>();

  private accept(socket: net.Socket): void {
    const client = this.nextClient++;
    this.sockets.add(socket);
    this.clients.set(client, socket);
    socket.setNoDelay(true);
    let buffer: Buffer = Buffer.alloc(0);
    let started = false;
    let batch: Buffer[] = [];
    socket.on("data", (chunk: Buffer) => {
      buffer = buffer.length === 0 ? chunk : Buffer.concat([buffer, chunk]);
      for (;;) {
        if (!started) {
          if (buffer.length < 8) return;
          const length = buffer.readInt32BE(0);
          if (buffer.length < length) return;
          const code = buffer.readInt32BE(4);
          const message = buffer.subarray(0, length);
          buffer = buffer.subarray(length);
          if (code === SSL_REQUEST || code === GSSENC_REQUEST) {
            socket.write("N");
            continue;
          }
          if (code === CANCEL_REQUEST) {
            socket.destroy();
            return;
          }
          started = true;
          this.submit(client, socket, [Buffer.from(message)]);
          continue;
        }
        if (buffer.length < 5) return;
        const length = buffer.readInt32BE(1) + 1;
        if (buffer.length < length) return;
        const type = String.fromCharCode(buffer[0] ?? 0);
        const message = Buffer.from(buffer.subarray(0, length));
        buffer = buffer.subarray(length);
        if (type === "X") {
          socket.end();
          return;
        }
        batch.push(message);
        if (type === "S" || type === "Q" || type === "H") {
          this.submit(client, socket, batch);
          batch = [];
        }
      }
    });
    const release = () => {
      this.sockets.delete(socket);
      this.clients.delete(client);
      for (const listening of this.listeners.values()) listening.delete(client);
      this.drop(client).catch(() => {});
    };
    socket.on("close", release);
    socket.on("error", () => socket.destroy());
  }

  private submit(client: number, socket: net.Socket, messages: Buffer[]): void {
    const input = messages.length === 1 ? (messages[0] as Buffer) : Buffer.concat(messages);
    this.waiting.push({
      client,
      run: async () => {
        // Noted when it runs, not when it arrives: the session listens in the order work runs.
        const relisten = this.noteListens(client, messages);
        // Scanned only while someone listens: otherwise a notification has nowhere to go.
        const scanner = this.anyListening()
          ? new NotificationScanner((message) => this.passOn(client, message))
          : undefined;
        await this.pglite.execProtocolRawStream(
          new Uint8Array(input.buffer, input.byteOffset, input.byteLength),
          {
            ...NO_FS_SYNC,
            // data may be a view of PGlite's memory, which the next message overwrites; a write
            // that cannot finish at once (a full Unix socket buffer) would send those later bytes.
            onRawData: (data) => {
              const output = Buffer.from(data);
              if (!socket.destroyed) socket.write(output);
              scanner?.scan(output);
            },
          },
        );
        // An UNLISTEN ends listening for the whole session: others still listening get it back.
        for (const channel of relisten)
          await this.pglite.execProtocolRawStream(queryMessage(`LISTEN ${quoteIdentifier(channel)}`), {
            ...NO_FS_SYNC,
            onRawData: (data) => scanner?.scan(Buffer.from(data)),
          });
      },
    });
    this.pump();
  }

  /** Records the LISTENs and UNLISTENs in a client's simple queries; returns channels to listen on again. */
  private noteListens(client: number, messages: Buffer[]): string[] {
    const relisten: string[] = [];
    for (const message of messages) {
      if (message[0] !== 0x51 /* 'Q' */) continue;
      const text = message.toString("utf8", 5, message.length - 1).replace(/--[^\n]*/g, "");
      for (const [, verb, name] of text.matchAll(
        /\b(UNLISTEN|LISTEN)\s+(\*|"(?:[^"]|"")+"|[A-Za-z_][\w$]*)/gi,
      )) {
        const unlisten = verb?.toUpperCase() === "UNLISTEN";
        const channels = name === "*" ? [...this.listeners.keys()] : [channelName(name ?? "")];
        for (const channel of channels) {
          let listening = this.listeners.get(channel);
          if (!listening) {
            listening = new Set();
            this.listeners.set(channel, listening);
          }
          if (unlisten) {
            listening.delete(client);
            if (listening.size > 0) relisten.push(channel);
          } else listening.add(client);
        }
      }
    }
    return relisten;
  }

  private anyListening(): boolean {
    for (const listening of this.listeners.values()) if (listening.size > 0) return true;
    return false;
  }

  /** A notification in one client's output goes to the other clients listening on its channel. */
  private passOn(from: number, message: Buffer): void {
    for (const client of this.listeners.get(notificationChannel(message)) ?? []) {
      const socket = this.clients.get(client);
      if (client !== from && socket && !socket.destroyed) socket.write(message);
    }
  }

  /** Runs the next unit of work: any client's while the session is free, else only the owner's. */
  private pump(): void {
    if (this.running) return;
    const index = this.waiting.findIndex((w) => this.owner === undefined || w.client === this.owner);
    if (index < 0) return;
    const [next] = this.waiting.splice(index, 1);
    if (!next) return;
    this.running = true;
    this.pglite
      .runExclusive(next.run)
      .catch(() => {})
      .finally(() => {
        this.owner = this.pglite.isInTransaction() ? next.client : undefined;
        this.running = false;
        this.pump();
      });
  }

  /** A client went away: forget its queued work and roll back a transaction it left open. */
  private async drop(client: number): Promise<void> {
    for (let i = this.waiting.length - 1; i >= 0; i--) {
      if (this.waiting[i]?.client === client) this.waiting.splice(i, 1);
    }
    if (this.owner === client) {
      // Through the raw protocol like all other work: pglite.exec() would wait for the lock that
      // runExclusive already holds, and the session would stay stuck for every other client.
      const rollback = queryMessage("ROLLBACK");
      this.waiting.unshift({
        client,
        run: () => this.pglite.execProtocolRawStream(rollback, { ...NO_FS_SYNC, onRawData: () => {} }),
      });
      this.pump();
    }
  }
}

/** A channel as PostgreSQL names it: unquoted names fold to lower case. */
function channelName(written: string): string {
  return written.startsWith('"') ? written.slice(1, -1).replaceAll('""', '"') : written.toLowerCase();
}

function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** A simple-protocol Query message: 'Q', its length, the SQL text and a terminating zero. */
function queryMessage(text: string): Uint8Array {
  const body = Buffer.from(`${text}\0`, "utf8");
  const message = Buffer.alloc(5 + body.length);
  message.write("Q", 0, "latin1");
  message.writeInt32BE(4 + body.length, 1);
  body.copy(message, 5);
  return message;
}
