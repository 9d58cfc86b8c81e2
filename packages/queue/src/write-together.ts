import type { Redis } from "ioredis";

/**
 * Holds the connection's writes until the event loop next runs its immediates (at most one turn of
 * the loop later: called from an immediate, as the producer's batches are, the next turn's), so
 * that the commands issued meanwhile reach Redis in one socket write. Everything else on the
 * connection waits as long, a worker's own commands included. ioredis writes each command (or
 * each pipeline) as it is issued, and each write that wakes Redis costs a system call and a switch
 * on both sides: an Emit at low load, feeding 4 queues one job each, made 4 writes. Nothing is
 * reordered: the socket sends what it holds in the order it was written.
 */
export function writeTogether(connection: Redis): void {
  const socket = connection.stream;
  // Corked already: that uncork sends these writes as well.
  if (!socket || socket.writableCorked > 0) return;
  socket.cork();
  // After the promise jobs that issue the commands: uncorked from process.nextTick, the socket
  // was open again before BullMQ's adds had written anything.
  setImmediate(() => socket.uncork());
}
