"""Follows Hookline's WatchAttempts from Python, with resume, using stubs generated from /proto.

Usage: watch_client.py HOST:PORT TENANT_ID RECEIVER_URL (the generated stubs on PYTHONPATH).
Prints one JSON object: the attempts seen before the disconnect, and after resuming.
"""

import json
import sys
import time

import grpc
from hookline.v1 import (
    attempt_log_pb2,
    attempt_log_pb2_grpc,
    emit_pb2,
    emit_pb2_grpc,
    endpoint_pb2,
    endpoint_pb2_grpc,
)


def attempts_of(log, tenant, count):
    """Waits (bounded) until the tenant has count attempts; returns them."""
    deadline = time.time() + 20
    while True:
        found = log.ListAttempts(attempt_log_pb2.ListAttemptsRequest(tenant_id=tenant)).attempts
        if len(found) >= count or time.time() > deadline:
            return list(found)
        time.sleep(0.05)


def brief(attempt):
    return {"id": attempt.id, "event_id": attempt.event_id, "status": attempt.response_status}


def main(address, tenant, url):
    with grpc.insecure_channel(address) as channel:
        grpc.channel_ready_future(channel).result(timeout=10)
        endpoints = endpoint_pb2_grpc.EndpointServiceStub(channel)
        emit = emit_pb2_grpc.EmitServiceStub(channel)
        log = attempt_log_pb2_grpc.AttemptLogServiceStub(channel)

        def send(event_id):
            emit.Emit(emit_pb2.EmitRequest(tenant_id=tenant, event_id=event_id, event_type="x", data_json="{}"))

        endpoints.CreateEndpoint(endpoint_pb2.CreateEndpointRequest(tenant_id=tenant, id="py", url=url))
        send("e0")
        cursor = attempts_of(log, tenant, 1)[0].id

        # Live: the stream opens after e0's attempt; e1's attempt arrives on it.
        first = []
        stream = log.WatchAttempts(attempt_log_pb2.WatchAttemptsRequest(tenant_id=tenant, after_attempt_id=cursor))
        send("e1")
        for response in stream:
            first.append(brief(response.attempt))
            break
        stream.cancel()

        # Away: two attempts are recorded while no stream is open.
        send("e2")
        send("e3")
        attempts_of(log, tenant, 4)

        # Resume from the last id seen: the missed ones, then live ones, each once and in order.
        resumed = []
        stream = log.WatchAttempts(
            attempt_log_pb2.WatchAttemptsRequest(tenant_id=tenant, after_attempt_id=first[-1]["id"])
        )
        send("e4")
        for response in stream:
            resumed.append(brief(response.attempt))
            if len(resumed) == 3:
                break
        stream.cancel()
        print(json.dumps({"first": first, "resumed": resumed}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3])
