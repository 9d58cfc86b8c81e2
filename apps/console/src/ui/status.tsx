import { DeliveryStatus } from "@hookline/contracts";

export const DELIVERY_STATUS_LABEL: Record<DeliveryStatus, string> = {
  [DeliveryStatus.UNSPECIFIED]: "unknown",
  [DeliveryStatus.PENDING]: "pending",
  [DeliveryStatus.DELIVERED]: "delivered",
  [DeliveryStatus.FAILED]: "failed",
  [DeliveryStatus.CANCELLED]: "cancelled",
};

export function StatusBadge({ status }: { status: DeliveryStatus }) {
  const label = DELIVERY_STATUS_LABEL[status];
  return <span className={`badge ${label}`}>{label}</span>;
}

/** "200", or "no response" when the attempt got none. */
export function HttpStatus({ status }: { status: number }) {
  if (status === 0) return <span className="badge failed">no response</span>;
  return <span className={`badge ${status >= 200 && status < 300 ? "delivered" : "failed"}`}>{status}</span>;
}
