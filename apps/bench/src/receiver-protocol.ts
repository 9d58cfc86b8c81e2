/** What the bench tells the receiver process. */
export type ReceiverMessage =
  | { type: "reset" }
  /** Report "reached" once this many requests have arrived since the last reset. */
  | { type: "expect"; count: number }
  | { type: "count" };

/** What the receiver process reports; times are epoch ms (performance.timeOrigin + now()). */
export type ReceiverReport =
  | { type: "listening"; port: number }
  | { type: "reached" | "counted"; count: number; firstAt: number; lastAt: number };
