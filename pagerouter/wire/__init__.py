"""What crosses the wire between the server and its clients, in one place both can import:
the stream items of a conversion (`items`), the gRPC protos (`protos/`) and the lossless
mapping between the document model and its protobuf form (`proto_model`).

`items` needs nothing beyond the core; `protos` and `proto_model` need protobuf (installed
with the `serve` extra), so they are imported only by the server and the clients.
"""
