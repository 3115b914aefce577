"""Request-level logic of the served graph and its clients, without Ray or Serve.

What a request meets before and around a conversion: the API key, admission limits per
client, deadlines, upload and option reading, error codes and their HTTP/gRPC statuses, the
OpenAPI of the POST routes, the health report of the graph, redaction of the config it shows,
gRPC forwarding, spans and the test-only fault hooks. `deployments/` (the Serve classes),
`graph/` and `clients/` use it; it sits above `convert` and `wire` and never imports ray,
serve, fastapi or `deployments`, so all of it is unit-tested in plain processes.
"""
