#!/bin/sh
# Regenerate the gRPC stubs in clients/protos/. The include root is the repo root, so the
# generated modules import each other as `clients.protos.pagerouter_pb2` (their package
# path), which the Serve gRPC proxy needs to unpickle the servicer's messages.
set -eu
cd "$(dirname "$0")/.."
python -m grpc_tools.protoc -I . \
  --python_out=. --grpc_python_out=. --pyi_out=. \
  clients/protos/pagerouter.proto
echo "generated clients/protos/pagerouter_pb2.py, pagerouter_pb2_grpc.py, pagerouter_pb2.pyi"
