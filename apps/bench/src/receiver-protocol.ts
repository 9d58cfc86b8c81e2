/** What the bench tells the receiver process. */
export type ReceiverMessage =
  | { type: "reset" }
  /** Report "reached" once this many requests have arrived since the last reset. */
  | { type: "expect"; count: number }
  | { type: "count" }
  /**
   * From now on answer 500 to the first `failures` requests of each delivery (path and
   * webhook-id), then 200, and keep every request's times; 0 returns to plain 200s.
   */
  | { type: "fail-first"; failures: number }
  | { type: "timeline" };

/** One request's times at the receiver: headers read, and answer sent (epoch ms). */
export type RequestTimes = [arrivedAt: number, answeredAt: number];

/** What the receiver process reports; times are epoch ms (performance.timeOrigin + now()). */
export type ReceiverReport =
  | { type: "listening"; port: number }
  | { type: "reached" | "counted"; count: number; firstAt: number; lastAt: number }
  /** Each delivery's requests since the last reset, in arrival order (fail-first mode only). */
  | { type: "timeline"; deliveries: RequestTimes[][] };
