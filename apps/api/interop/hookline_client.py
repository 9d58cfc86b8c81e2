"""Drives Hookline's gRPC api from Python with stubs generated from /proto by protoc.

Usage: hookline_client.py HOST:PORT TENANT_ID (the generated stubs must be on PYTHONPATH: Hookline's
services, and the messages of proto/google/rpc, which Debian's grpcio does not bring).
Prints one JSON object with what the api answered; the node test asserts on it.
"""

import json
import sys

import grpc
from google.rpc import error_details_pb2, status_pb2
from hookline.v1 import (
    attempt_log_pb2,
    attempt_log_pb2_grpc,
    delivery_pb2,
    emit_pb2,
    emit_pb2_grpc,
    endpoint_pb2,
    endpoint_pb2_grpc,
)


def bad_request_fields(error):
    """The fields a BadRequest detail names, from the google.rpc.Status in the trailers."""
    details = dict(error.trailing_metadata() or ()).get("grpc-status-details-bin")
    if details is None:
        return []
    fields = []
    for detail in status_pb2.Status.FromString(details).details:
        bad = error_details_pb2.BadRequest()
        if detail.Unpack(bad):
            fields.extend(violation.field for violation in bad.field_violations)
    return fields


def status_of(call):
    """Runs call, which must fail; returns its status code name, message and BadRequest fields."""
    try:
        call()
    except grpc.RpcError as error:
        return {"code": error.code().name, "message": error.details(), "fields": bad_request_fields(error)}
    raise AssertionError("the call was expected to fail")


def main(address, tenant):
    with grpc.insecure_channel(address) as channel:
        grpc.channel_ready_future(channel).result(timeout=10)
        endpoints = endpoint_pb2_grpc.EndpointServiceStub(channel)
        emit = emit_pb2_grpc.EmitServiceStub(channel)
        log = attempt_log_pb2_grpc.AttemptLogServiceStub(channel)

        created = endpoints.CreateEndpoint(
            endpoint_pb2.CreateEndpointRequest(
                tenant_id=tenant,
                id="py-endpoint",
                url="https://python.example/hooks",
                event_types=["order.created"],
            ),
            timeout=10,
        ).endpoint
        emitted = emit.Emit(
            emit_pb2.EmitRequest(
                tenant_id=tenant,
                event_id="py:order-1",
                event_type="order.created",
                data_json='{"from": "python"}',
            ),
            timeout=10,
        )
        event = emit.GetEvent(emit_pb2.GetEventRequest(tenant_id=tenant, event_id="py:order-1"), timeout=10)
        deliveries = log.ListDeliveries(
            attempt_log_pb2.ListDeliveriesRequest(tenant_id=tenant, endpoint_id="py-endpoint"), timeout=10
        )
        taken = status_of(
            lambda: endpoints.CreateEndpoint(
                endpoint_pb2.CreateEndpointRequest(tenant_id=tenant, id="py-endpoint", url="https://x.example/"),
                timeout=10,
            )
        )
        bad_json = status_of(
            lambda: emit.Emit(
                emit_pb2.EmitRequest(tenant_id=tenant, event_type="order.created", data_json="{nope"), timeout=10
            )
        )
        no_tenant = status_of(
            lambda: endpoints.ListEndpoints(endpoint_pb2.ListEndpointsRequest(), timeout=10)
        )

    print(
        json.dumps(
            {
                "endpoint": {
                    "id": created.id,
                    "tenant_id": created.tenant_id,
                    "status": endpoint_pb2.EndpointStatus.Name(created.status),
                    "secret_prefix": created.secret[:6],
                    "event_types": list(created.event_types),
                    "created_at_seconds": created.created_at.seconds,
                },
                "emit": {
                    "event_id": emitted.event_id,
                    "delivery_ids": list(emitted.delivery_ids),
                    "duplicate": emitted.duplicate,
                },
                "event": {
                    "id": event.event.id,
                    "event_type": event.event.event_type,
                    "data_json": event.event.data_json,
                    "delivery_ids": [d.id for d in event.deliveries],
                },
                "deliveries": [
                    {
                        "id": d.id,
                        "event_id": d.event_id,
                        "endpoint_id": d.endpoint_id,
                        "status": delivery_pb2.DeliveryStatus.Name(d.status),
                    }
                    for d in deliveries.deliveries
                ],
                "errors": {"taken": taken, "bad_json": bad_json, "no_tenant": no_tenant},
            }
        )
    )


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
