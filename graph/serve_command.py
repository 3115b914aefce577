"""`pagerouter serve`: run the Ray Serve graph (HTTP + gRPC) on this machine.

Starts a local Ray (fractional CPUs, no dashboard), Serve's HTTP and gRPC proxies on
127.0.0.1 by default, and deploys the graph built from the same config as `pagerouter
convert`; Ctrl-C shuts Serve and Ray down cleanly. Registered as a `pagerouter.commands`
entry point (see pagerouter/cli.py); Ray is imported only when the command runs.
"""

from __future__ import annotations

import os
import signal
import socket
import sys
import threading
import time
from pathlib import Path

from pagerouter.cli import EXIT_OK, load_cli_config, usage_error


def add_command(sub) -> None:
    s = sub.add_parser("serve", help="run the Ray Serve graph (HTTP + gRPC) on this machine")
    s.add_argument("--config", type=Path, help="pagerouter YAML config (or a Serve config with args.config)")
    s.add_argument("--http-port", type=int, help="HTTP port (default from config: 8000)")
    s.add_argument("--grpc-port", type=int, help="gRPC port (default from config: 9000)")
    s.add_argument("--host", help="listen address (default from config: 127.0.0.1)")
    s.add_argument("--num-cpus", type=int, help="logical CPUs for the local Ray (default: 2x cores)")
    s.set_defaults(func=cmd_serve)


def _port_free(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def cmd_serve(args) -> int:
    cfg = load_cli_config(args.config)
    if args.http_port is not None:
        cfg.serve.http_port = args.http_port
    if args.grpc_port is not None:
        cfg.serve.grpc_port = args.grpc_port
    if args.host:
        cfg.serve.host = args.host
    for what, port in (("HTTP", cfg.serve.http_port), ("gRPC", cfg.serve.grpc_port)):
        if not _port_free(cfg.serve.host, port):
            return usage_error(f"{what} port {cfg.serve.host}:{port} is already in use")
    num_cpus = args.num_cpus or cfg.serve.ray_num_cpus or 2 * (os.cpu_count() or 1)

    import ray
    from ray import serve

    from graph.builder import build_app, serve_start_options

    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    t0 = time.perf_counter()
    ray.init(num_cpus=num_cpus, include_dashboard=False, log_to_driver=True)
    try:
        serve.start(**serve_start_options(cfg.serve))
        serve.run(build_app(cfg), name=cfg.serve.app_name, route_prefix=cfg.serve.route_prefix, blocking=False)
        print(
            f"pagerouter: serving in {time.perf_counter() - t0:.1f} s: "
            f"HTTP http://{cfg.serve.host}:{cfg.serve.http_port}  gRPC {cfg.serve.host}:{cfg.serve.grpc_port}  "
            "(Ctrl-C stops)",
            file=sys.stderr,
            flush=True,
        )
        while not stop.wait(0.5):
            pass
        print("pagerouter: stopping", file=sys.stderr, flush=True)
    finally:
        try:
            serve.shutdown()
        finally:
            ray.shutdown()
    return EXIT_OK
