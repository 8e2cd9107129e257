"""Calls flurry serve's gRPC port with Debian's python3-grpcio, from stubs that
python3-grpc-tools generates at run time from the repository's .proto files.

Usage: /usr/bin/python3 grpc_client.py PROTO_DIR HOST:PORT TOKEN
Prints one JSON object with what each call answered; the Node test
(src/grpc/python.test.ts) checks it against the core's decoder.
"""
import importlib
import json
import os
import shutil
import sys
import tempfile

import grpc
from grpc_tools import protoc


def generate(proto_dir, out):
    # grpc/health/v1/health.proto would become the module grpc.health.v1, inside grpcio's
    # own package: it is generated from a copy named flurry_health.proto instead.
    health_dir = os.path.join(out, "src")
    os.makedirs(health_dir)
    shutil.copy(os.path.join(proto_dir, "grpc/health/v1/health.proto"), os.path.join(health_dir, "flurry_health.proto"))
    for inc, f in ((proto_dir, "flurry/v1/id_service.proto"), (health_dir, "flurry_health.proto")):
        args = ["protoc", "-I" + inc, "--python_out=" + out, "--grpc_python_out=" + out, f]
        if protoc.main(args) != 0:
            raise SystemExit("protoc failed on " + f)
    sys.path.insert(0, out)


def code_of(err):
    return {k: v for k, v in (err.trailing_metadata() or ())}.get("flurry-error-code")


def main():
    proto_dir, target, token = sys.argv[1:4]
    out = tempfile.mkdtemp(prefix="flurry-grpc-py-")
    generate(proto_dir, out)
    pb = importlib.import_module("flurry.v1.id_service_pb2")
    stub_mod = importlib.import_module("flurry.v1.id_service_pb2_grpc")
    channel = grpc.insecure_channel(target)
    stub = stub_mod.IdServiceStub(channel)
    md = (("authorization", "Bearer " + token),)
    got = {}
    r = stub.NextId(pb.NextIdRequest(), metadata=md, timeout=10)
    got["next"] = {"id": str(r.id), "idString": r.id_string}
    r = stub.BatchIds(pb.BatchIdsRequest(count=100), metadata=md, timeout=10)
    got["batch"] = [str(i) for i in r.ids]
    chunks = []
    for m in stub.StreamIds(pb.StreamIdsRequest(chunk=500, limit=5000), metadata=md, timeout=20):
        chunks.append([str(i) for i in m.ids])
    got["stream"] = chunks
    r = stub.DecodeId(pb.DecodeIdRequest(id=int(got["next"]["id"])), metadata=md, timeout=10)
    got["decode"] = {
        "id": str(r.id),
        "unixMs": r.unix_ms,
        "timestamp": r.timestamp,
        "sequence": r.sequence,
        "fields": dict(r.fields),
    }
    try:
        stub.NextId(pb.NextIdRequest(), timeout=10)
        got["noToken"] = "accepted"
    except grpc.RpcError as e:
        got["noToken"] = {"code": e.code().name, "flurry": code_of(e)}
    try:
        stub.NextId(pb.NextIdRequest(), metadata=(("authorization", "Bearer wrong-token-0123456789"),), timeout=10)
        got["wrongToken"] = "accepted"
    except grpc.RpcError as e:
        got["wrongToken"] = {"code": e.code().name, "flurry": code_of(e)}
    try:
        stub.BatchIds(pb.BatchIdsRequest(count=10**9), metadata=md, timeout=10)
        got["tooMany"] = "accepted"
    except grpc.RpcError as e:
        got["tooMany"] = {"code": e.code().name, "flurry": code_of(e)}
    health_pb = importlib.import_module("flurry_health_pb2")
    health_grpc = importlib.import_module("flurry_health_pb2_grpc")
    h = health_grpc.HealthStub(channel).Check(health_pb.HealthCheckRequest(service="flurry.v1.IdService"), timeout=10)
    got["health"] = health_pb.HealthCheckResponse.ServingStatus.Name(h.status)
    channel.close()
    shutil.rmtree(out, ignore_errors=True)
    print(json.dumps(got))


if __name__ == "__main__":
    main()
