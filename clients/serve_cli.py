"""`pagerouter serve` and `pagerouter client convert`: the serving half of the CLI.

`serve` starts a local Ray (fractional CPUs, no dashboard), starts Serve's HTTP and gRPC
proxies on 127.0.0.1 by default and deploys the graph built from the same config as
`pagerouter convert`; Ctrl-C shuts Serve and Ray down cleanly.
`client convert` sends a file to a running server over HTTP or gRPC and prints exactly what
`pagerouter convert` prints for it (the Markdown is rendered locally from the same Document).
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import sys
import threading
import time
from pathlib import Path

EXIT_OK, EXIT_PAGES_FAILED, EXIT_USAGE = 0, 1, 2


def add_serve_commands(sub) -> None:
    s = sub.add_parser("serve", help="run the Ray Serve graph (HTTP + gRPC) on this machine")
    s.add_argument("--config", type=Path, help="pagerouter YAML config (or a Serve config with args.config)")
    s.add_argument("--http-port", type=int, help="HTTP port (default from config: 8000)")
    s.add_argument("--grpc-port", type=int, help="gRPC port (default from config: 9000)")
    s.add_argument("--host", help="listen address (default from config: 127.0.0.1)")
    s.add_argument("--num-cpus", type=int, help="logical CPUs for the local Ray (default: 2x cores)")
    s.set_defaults(func=cmd_serve)

    c = sub.add_parser("client", help="talk to a running pagerouter server")
    csub = c.add_subparsers(dest="client_command", required=True)
    cc = csub.add_parser("convert", help="convert a file on a server; prints what `pagerouter convert` prints")
    cc.add_argument("input", type=Path, help="PDF or image file")
    where = cc.add_mutually_exclusive_group(required=True)
    where.add_argument("--url", help="HTTP base URL, e.g. http://127.0.0.1:8000")
    where.add_argument("--grpc", metavar="HOST:PORT", help="gRPC address, e.g. 127.0.0.1:9000")
    cc.add_argument("--format", choices=["md", "json"], default="md", help="output format (default md)")
    cc.add_argument("--pages", help="page selection, e.g. 1-3,7 (1-based)")
    cc.add_argument("--password", help="password for encrypted PDFs")
    cc.add_argument("--config", type=Path, help="config whose `output` section shapes the Markdown")
    cc.add_argument("--page-markers", action="store_true", help="mark page boundaries in the Markdown")
    cc.add_argument("--stream", action="store_true", help="use the streaming API (pages arrive as they finish)")
    cc.add_argument("--timeout", type=float, default=600.0, help="seconds before the request is abandoned")
    cc.add_argument("--application", default="pagerouter", help="Serve application name (gRPC routing)")
    cc.set_defaults(func=cmd_client_convert)


def _err(msg: str) -> int:
    print(f"pagerouter: error: {msg}", file=sys.stderr)
    return EXIT_USAGE


def _load(path: Path | None):
    from pagerouter.config import load_config

    try:
        return load_config(path)
    except (ValueError, FileNotFoundError) as exc:
        raise SystemExit(_err(str(exc)))
    except Exception as exc:  # noqa: BLE001 - pydantic ValidationError
        raise SystemExit(_err(f"{path}: invalid config: {exc}"))


def _port_free(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def cmd_serve(args) -> int:
    cfg = _load(args.config)
    if args.http_port is not None:
        cfg.serve.http_port = args.http_port
    if args.grpc_port is not None:
        cfg.serve.grpc_port = args.grpc_port
    if args.host:
        cfg.serve.host = args.host
    for what, port in (("HTTP", cfg.serve.http_port), ("gRPC", cfg.serve.grpc_port)):
        if not _port_free(cfg.serve.host, port):
            return _err(f"{what} port {cfg.serve.host}:{port} is already in use")
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


def cmd_client_convert(args) -> int:
    from clients.errors import PagerouterClientError
    from pagerouter.config import PagerouterConfig
    from pagerouter.render import route_summary_table, to_json, to_markdown

    cfg = _load(args.config) if args.config else PagerouterConfig()
    if args.page_markers:
        cfg.output.page_markers = True
    if not args.input.is_file():
        return _err(f"{args.input}: no such file")
    kw = {"filename": str(args.input), "pages": args.pages, "password": args.password}
    try:
        if args.url:
            from clients.http_client import PagerouterHttpClient

            with PagerouterHttpClient(args.url, timeout=args.timeout) as client:
                doc = client.convert_streamed(args.input, **kw) if args.stream else client.convert(args.input, **kw)
        else:
            from clients.grpc_client import PagerouterGrpcClient

            with PagerouterGrpcClient(args.grpc, timeout=args.timeout, application=args.application) as client:
                doc = client.convert_streamed(args.input, **kw) if args.stream else client.convert(args.input, **kw)
    except PagerouterClientError as exc:
        return _err(exc.message if exc.code in ("bad_input", "bad_pages") else str(exc))
    except Exception as exc:  # noqa: BLE001 - connection refused, timeouts: one line, no traceback
        return _err(f"cannot reach the server: {type(exc).__name__}: {str(exc)[:200]}")
    code = EXIT_OK
    for p in doc.pages:
        if p.status == "failed":
            print(f"pagerouter: warning: {p.error}", file=sys.stderr)
            code = EXIT_PAGES_FAILED
    out = to_markdown(doc, cfg.output, images_rel_to=Path.cwd()) if args.format == "md" else to_json(doc)
    sys.stdout.write(out if out.endswith("\n") else out + "\n")
    sys.stdout.flush()
    print(route_summary_table([doc]), file=sys.stderr)
    return code


if __name__ == "__main__":  # pragma: no cover
    ap = argparse.ArgumentParser(prog="pagerouter")
    add_serve_commands(ap.add_subparsers(dest="command", required=True))
    a = ap.parse_args()
    raise SystemExit(a.func(a))
