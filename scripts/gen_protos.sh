#!/bin/sh
# Regenerate the gRPC stubs in pagerouter/wire/protos/. The include root is the repo root, so the
# generated modules import each other as `pagerouter.wire.protos.pagerouter_pb2` (their package
# path), which the Serve gRPC proxy needs to unpickle the servicer's messages.
set -eu
cd "$(dirname "$0")/.."
python -m grpc_tools.protoc -I . \
  --python_out=. --grpc_python_out=. --pyi_out=. \
  pagerouter/wire/protos/pagerouter.proto
echo "generated pagerouter/wire/protos/pagerouter_pb2.py, pagerouter_pb2_grpc.py, pagerouter_pb2.pyi"
