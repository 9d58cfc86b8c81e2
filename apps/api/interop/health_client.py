"""Asks Hookline's api for its health the way grpcio users do, through grpc.health.v1.Health.

Usage: health_client.py HOST:PORT (grpc_health.v1 stubs must be importable: grpcio-health-checking,
or stubs generated from proto/grpc/health/v1/health.proto under the grpc_health/ path).
Prints one JSON object with what the api answered; the node test asserts on it.
"""

import json
import sys

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc


def status_name(response):
    return health_pb2.HealthCheckResponse.ServingStatus.Name(response.status)


def main(address):
    with grpc.insecure_channel(address) as channel:
        grpc.channel_ready_future(channel).result(timeout=10)
        health = health_pb2_grpc.HealthStub(channel)
        check = {
            service: status_name(health.Check(health_pb2.HealthCheckRequest(service=service), timeout=10))
            for service in ["", "hookline.v1.EmitService"]
        }
        try:
            health.Check(health_pb2.HealthCheckRequest(service="nope.v1.Nothing"), timeout=10)
            unknown = "OK"
        except grpc.RpcError as error:
            unknown = error.code().name
        watch = health.Watch(health_pb2.HealthCheckRequest(service=""), timeout=10)
        first = status_name(next(watch))
        watch.cancel()
    print(json.dumps({"check": check, "unknown": unknown, "watch_first": first}))


if __name__ == "__main__":
    main(sys.argv[1])
