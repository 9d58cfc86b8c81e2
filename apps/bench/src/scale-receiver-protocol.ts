/** What the bench asks the scale receiver; every request carries an id its reply repeats. */
export type ScaleReceiverRequest =
  /** Forgets every count and time, and drops the connections held by hanging paths. */
  | { id: number; type: "reset" }
  /** Arrival times (epoch ms) of a group's requests since the last reset. */
  | { id: number; type: "times"; group: string }
  /** Replies once the group has counted this many requests. */
  | { id: number; type: "wait"; group: string; count: number }
  /** Arrival time of each request whose body carried "probe":"<name>". */
  | { id: number; type: "probes" };

export type ScaleReceiverReply =
  | { id: number; type: "done" }
  | { id: number; type: "times"; times: number[] }
  | { id: number; type: "probes"; probes: Record<string, number> };

/** The first message, with no id: the port it listens on. */
export interface ScaleReceiverListening {
  type: "listening";
  port: number;
}
