/** One throughput run, Hookline's or the reference design's, in a form the report compares. */
export interface ThroughputRun {
  label: string;
  deliveries: number;
  /** First emit sent to no delivery left pending, in seconds. */
  seconds: number;
  /** CPU seconds each process (group) used during the measured window. */
  cpu: Map<string, number>;
}
