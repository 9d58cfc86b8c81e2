import dgram from "node:dgram";
import { once } from "node:events";
import net from "node:net";

/** A nameserver on 127.0.0.1 for tests: `server` is what a resolver's setServers takes. */
export interface TestDnsServer {
  server: string;
  /** Queries received, as "name A" or "name AAAA", in order. */
  queries: string[];
  close(): Promise<void>;
}

const TYPE_A = 1;
const TYPE_AAAA = 28;

/**
 * Answers A and AAAA queries from `records` (name to addresses, both families mixed). A name not
 * in it gets NXDOMAIN; a query in `silent` ("name", or "name AAAA" for one type) gets no answer at
 * all, like a dead nameserver; a name in `slow` is answered that many ms late.
 */
export async function startDnsServer(
  records: Record<string, string[]>,
  silent: readonly string[] = [],
  slow: Record<string, number> = {},
): Promise<TestDnsServer> {
  const socket = dgram.createSocket("udp4");
  const queries: string[] = [];
  socket.on("message", (query, peer) => {
    const { name, type, questionEnd } = readQuestion(query);
    const asked = `${name} ${type === TYPE_AAAA ? "AAAA" : "A"}`;
    queries.push(asked);
    if (silent.includes(name) || silent.includes(asked)) return;
    const known = records[name];
    const family = type === TYPE_AAAA ? 6 : 4;
    const answers = (known ?? []).filter((address) => net.isIP(address) === family);
    const header = Buffer.alloc(12);
    query.copy(header, 0, 0, 2); // the query's id
    header.writeUInt16BE(known === undefined ? 0x8183 : 0x8180, 2); // response, recursion; NXDOMAIN or not
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(answers.length, 6);
    const answerRecords = answers.map((address) => answerRecord(type, address));
    const answer = Buffer.concat([header, query.subarray(12, questionEnd), ...answerRecords]);
    setTimeout(() => socket.send(answer, peer.port, peer.address), slow[name] ?? 0);
  });
  socket.bind(0, "127.0.0.1");
  await once(socket, "listening");
  return {
    server: `127.0.0.1:${socket.address().port}`,
    queries,
    close: () => new Promise((resolve) => socket.close(() => resolve())),
  };
}

function readQuestion(query: Buffer): { name: string; type: number; questionEnd: number } {
  const labels: string[] = [];
  let at = 12;
  for (let length = query[at] ?? 0; length > 0; length = query[at] ?? 0) {
    labels.push(query.toString("latin1", at + 1, at + 1 + length));
    at += 1 + length;
  }
  at += 1;
  return { name: labels.join(".").toLowerCase(), type: query.readUInt16BE(at), questionEnd: at + 4 };
}

function answerRecord(type: number, address: string): Buffer {
  const data =
    type === TYPE_A
      ? Buffer.from(address.split(".").map(Number))
      : Buffer.from(expandIpv6(address).flatMap((group) => [group >> 8, group & 0xff]));
  const record = Buffer.alloc(12);
  record.writeUInt16BE(0xc00c, 0); // the name: a pointer to the question's
  record.writeUInt16BE(type, 2);
  record.writeUInt16BE(1, 4); // class IN
  record.writeUInt32BE(0, 6); // TTL: no cache keeps it
  record.writeUInt16BE(data.length, 10);
  return Buffer.concat([record, data]);
}

function expandIpv6(address: string): number[] {
  const [head = "", tail = ""] = address.split("::");
  const parse = (part: string) =>
    part === "" ? [] : part.split(":").map((group) => Number.parseInt(group, 16));
  const front = parse(head);
  const back = address.includes("::") ? parse(tail) : [];
  return [...front, ...new Array(8 - front.length - back.length).fill(0), ...back];
}
