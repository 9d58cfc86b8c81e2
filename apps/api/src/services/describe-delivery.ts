import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import {
  type DescribeDeliveryRequest,
  type DescribeDeliveryResponse,
  DescribeDeliveryResponseSchema,
} from "@hookline/contracts";
import { parseSecret, webhookEnvelope, webhookHeaders } from "@hookline/signing";
import { getDelivery, listAttempts, loadDeliveryWork, NotFoundError } from "@hookline/store";
import { linkSees, tenantFor } from "../auth.js";
import { attemptMessage, deliveryMessage } from "../convert.js";
import type { ApiDeps } from "../deps.js";
import { requireId } from "../validate.js";

const MAX_ATTEMPTS_SHOWN = 1000;

/**
 * A delivery with what each attempt sent: the body (identical on every attempt) and the headers,
 * re-signed for the attempt's timestamp with the secrets that signed then (from each one's start
 * until it retired). Secrets never leave.
 */
export async function describeDelivery(
  deps: ApiDeps,
  req: DescribeDeliveryRequest,
  ctx: HandlerContext,
): Promise<DescribeDeliveryResponse> {
  const tenantId = requireId("tenant_id", tenantFor(ctx, req.tenantId));
  const deliveryId = requireId("delivery_id", req.deliveryId);
  const delivery = await getDelivery(deps.db, tenantId, deliveryId); // NOT_FOUND when absent
  if (!linkSees(ctx, delivery)) throw new NotFoundError(`delivery "${deliveryId}"`);
  const [work] = await loadDeliveryWork(deps.db, [deliveryId]);
  const attempts = await listAttempts(deps.db, { tenantId, deliveryId }, MAX_ATTEMPTS_SHOWN, "");
  const body = work ? webhookEnvelope(work) : "";
  const endpoint = work?.endpoint;
  return create(DescribeDeliveryResponseSchema, {
    delivery: deliveryMessage(delivery),
    eventType: work?.eventType ?? "",
    body,
    requests: attempts.items.map((attempt) => {
      const startedMs = attempt.startedAt.getTime();
      // The secrets that signed then: each from when it began (where known) until it retired.
      const secrets = endpoint
        ? [
            ...(endpoint.secretSince.getTime() <= startedMs ? [endpoint.secret] : []),
            ...endpoint.previousSecrets
              .filter((p) => (p.since?.getTime() ?? 0) <= startedMs && p.expiresAt.getTime() > startedMs)
              .map((p) => p.secret),
          ]
        : [];
      const timestamp = Math.floor(startedMs / 1000);
      // With no secret known to have signed then (retired since, or the endpoint deleted), every
      // header but the signature, which cannot be recomputed.
      const headers =
        secrets.length > 0
          ? webhookHeaders(secrets.map(parseSecret), delivery.eventId, timestamp, body)
          : {
              "content-type": "application/json",
              "webhook-id": delivery.eventId,
              "webhook-timestamp": String(timestamp),
            };
      return {
        attempt: attemptMessage(attempt),
        url: attempt.url ?? endpoint?.url ?? "",
        headers: Object.entries({ ...headers, "user-agent": "Hookline/0.1" }).map(([name, value]) => ({
          name,
          value,
        })),
      };
    }),
  });
}
