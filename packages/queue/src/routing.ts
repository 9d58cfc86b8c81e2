import { createHash } from "node:crypto";

/** A job carries ids only: the delivery and which attempt it is for. */
export interface DeliveryJobData {
  deliveryId: string;
  attemptNumber: number;
  /** Set for an attempt an operator asked for: it is made once, with no retries after it. */
  manual?: boolean;
}

/** Which endpoint a delivery goes to. */
export interface EndpointRef {
  tenantId: string;
  endpointId: string;
}

/** What a queue enforces across every worker process: attempts in flight, and starts per second. */
export interface QueueLimits {
  /** With adaptive set, where the limit starts until a worker has learned better. */
  maxInFlight: number;
  /** The workers learn maxInFlight from the endpoint's answers (AdaptiveLimit), within their ceiling. */
  adaptive?: boolean | undefined;
  /** Undefined: no rate limit. */
  ratePerSecond?: number | undefined;
}

/**
 * Endpoints whose queue names are kept. Each job added and each queue a worker is told of asks for
 * one: hashed every time, that was about 2 us a job, some 2% of the api's CPU per Emit (4 jobs).
 * Past this many the name kept longest is dropped, and hashed again if asked for.
 */
const NAMES_KEPT = 4096;

/**
 * Where deliveries go, the one place that knows it: producer, consumer, sweeper and metrics all
 * ask here. The default layout is the reference design's, one BullMQ queue per endpoint
 * ("hookline-ep-..."); with lanes, endpoints are hashed onto N shared queues and the limits are
 * the lane's, not the endpoint's.
 */
export class QueueRouting {
  /** Queue names by endpoint, in the order first asked for (see NAMES_KEPT). */
  private readonly names = new Map<string, string>();

  constructor(
    readonly lanes: number,
    /** Limits of an endpoint that sets none, and of every lane. */
    readonly defaultLimits: QueueLimits,
  ) {}

  /** The queue an endpoint's deliveries go to. Hashing keeps names free of ':' whatever the ids hold. */
  queueOf(endpoint: EndpointRef): string {
    // The tenant's length first, so that no two (tenant, endpoint) pairs share a key.
    const key = `${endpoint.tenantId.length}:${endpoint.tenantId}${endpoint.endpointId}`;
    const known = this.names.get(key);
    if (known !== undefined) return known;
    const name = this.hashedName(endpoint);
    if (this.names.size >= NAMES_KEPT) this.names.delete(this.names.keys().next().value as string);
    this.names.set(key, name);
    return name;
  }

  private hashedName(endpoint: EndpointRef): string {
    const digest = createHash("sha256")
      .update(`${Buffer.byteLength(endpoint.tenantId)}:${endpoint.tenantId}${endpoint.endpointId}`)
      .digest();
    if (this.lanes > 0) return `hookline-lane-${digest.readUInt32BE(0) % this.lanes}`;
    return `hookline-ep-${digest.subarray(0, 16).toString("base64url")}`;
  }

  /** The limits a queue enforces, given its endpoint's own settings (null: not set). */
  limitsOf(own: { maxInFlight: number | null; ratePerSecond: number | null }): QueueLimits {
    if (this.lanes > 0) return this.defaultLimits;
    return {
      // An endpoint's own max_in_flight is fixed; only the service default may be adaptive.
      ...(own.maxInFlight === null ? this.defaultLimits : { maxInFlight: own.maxInFlight }),
      ratePerSecond: own.ratePerSecond ?? this.defaultLimits.ratePerSecond,
    };
  }
}

/** The first attempt's job id is the delivery id; later attempts get their own ids, so a retry is a new job. */
export function jobIdFor(deliveryId: string, attemptNumber: number): string {
  return attemptNumber <= 1 ? deliveryId : `${deliveryId}.${attemptNumber}`;
}
