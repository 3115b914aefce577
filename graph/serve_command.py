"""`pagerouter serve`: run the Ray Serve graph (HTTP + gRPC) on this machine.

Starts a local Ray (fractional CPUs, no dashboard; or joins a cluster with --address), Serve's
HTTP proxy and pagerouter's own gRPC front (graph/grpc_front.py; Serve's gRPC proxy would listen
on every interface), both on serve.host (127.0.0.1 by default, `--host` changes both), and
deploys the graph built from the same config as `pagerouter convert`, with replica ceilings and
fractional CPUs derived from the machine when `--replicas auto|N` (or serve.replicas) asks
(graph/replicas.py). With PAGEROUTER_API_KEY (or PAGEROUTER_API_KEY_FILE) set, every call but
/healthz needs the key; without it a non-loopback host gets a warning.
Ctrl-C shuts Serve and Ray down cleanly. Registered as a `pagerouter.commands` entry point
(see pagerouter/cli/main.py); Ray is imported only when the command runs.
"""

from __future__ import annotations

import os
import signal
import socket
import sys
import threading
import time
from pathlib import Path

from pagerouter.cli.common import EXIT_OK, load_cli_config, usage_error


def add_command(sub) -> None:
    s = sub.add_parser("serve", help="run the Ray Serve graph (HTTP + gRPC) on this machine")
    s.add_argument("--config", type=Path, help="pagerouter YAML config (or a Serve config with args.config)")
    s.add_argument("--http-port", type=int, help="HTTP port (default from config: 8000)")
    s.add_argument("--grpc-port", type=int, help="gRPC port (default from config: 9000)")
    s.add_argument("--host", help="listen address of HTTP and gRPC (default from config: 127.0.0.1)")
    s.add_argument("--num-cpus", type=int, help="logical CPUs for the local Ray (default: 2x cores)")
    s.add_argument("--replicas", type=_replicas_arg, metavar="auto|N",
                   help="replicas per deployment: `auto` derives autoscaling ceilings and fractional CPUs from the "
                        "machine (or the cluster of --address), N caps Triage/Layout/SmallReader at N "
                        "(default: config serve.replicas; when that is unset too, `auto` for every replica and CPU "
                        "number the config does not set itself)")
    s.add_argument("--address", help="join a running Ray cluster (e.g. 127.0.0.1:6379) instead of starting a "
                                     "local Ray; Serve is shut down on that cluster at exit, the cluster stays")
    s.add_argument("--metrics-port", type=int,
                   help="Prometheus export port of the local Ray (pagerouter's batch-size and stage metrics)")
    s.set_defaults(func=cmd_serve)


def _replicas_arg(text: str):
    import argparse

    if text == "auto":
        return text
    if text.isdecimal() and int(text) >= 1:
        return int(text)
    raise argparse.ArgumentTypeError(f"expected `auto` or an integer >= 1, not {text!r}")


def _reachable(address: str, timeout: float = 3.0) -> bool:
    """Whether something accepts TCP at HOST:PORT (Ray's own join retries for minutes first)."""
    host, _, port = address.rpartition(":")
    if not port.isdecimal():
        return True  # not HOST:PORT (e.g. `auto`): let Ray resolve it
    try:
        with socket.create_connection((host.strip("[]") or "127.0.0.1", int(port)), timeout=timeout):
            return True
    except OSError:
        return False


def _port_free(host: str, port: int) -> bool:
    try:
        family, _, _, _, addr = socket.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM)[0]
    except socket.gaierror:
        return False
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(addr)
        except OSError:
            return False
    return True


def _auth_line(key, host: str) -> str | None:
    """The warning for an open server on a reachable address, else None."""
    from pagerouter.service.api_key import ENV_KEY, ENV_KEY_FILE, is_loopback

    if key is None and not is_loopback(host):
        return (f"pagerouter: warning: listening on {host} without an API key: anyone who can reach this "
                f"address can use the server; set {ENV_KEY} or {ENV_KEY_FILE}")
    return None


# On a node whose cores are all busy, Serve's proxy answered its readiness ping after Serve's
# 5 s default: the controller killed and restarted it until `pagerouter serve` gave up at start
# (seen with two CPU-bound processes beside the test suite on 2 cores). A proxy that is slow to
# start is not a dead one: a local Ray gets more patience, unless the caller set its own.
SERVE_PROXY_PATIENCE = {"RAY_SERVE_PROXY_READY_CHECK_TIMEOUT_S": "30", "RAY_SERVE_PROXY_HEALTH_CHECK_TIMEOUT_S": "30"}


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
    if args.address and (args.num_cpus or args.metrics_port):
        return usage_error("--num-cpus and --metrics-port set up a local Ray; a cluster (--address) has its own")
    if args.address and not _reachable(args.address):
        return usage_error(f"cannot join the Ray cluster at {args.address}: nothing listens there "
                           "(start it with `ray start --head`, or leave --address out for a local Ray)")
    if args.replicas is not None:
        cfg.serve.replicas = args.replicas
    num_cpus = args.num_cpus or cfg.serve.ray_num_cpus or 2 * (os.cpu_count() or 1)
    from pagerouter.service.api_key import ApiKeyError, load_api_key

    try:
        key = load_api_key()  # the replicas and the gRPC front read the same variables
    except ApiKeyError as exc:
        return usage_error(str(exc))
    warning = _auth_line(key, cfg.serve.host)
    if warning:
        print(warning, file=sys.stderr, flush=True)
    problem = _vlm_limits_problem(cfg)
    if problem:  # before Ray: a replica whose engine cannot start would be restarted by Serve forever
        return usage_error(problem)
    # stdout carries only pagerouter's own output: Ray's processes (raylet, GCS, the Serve controller)
    # inherit this process's fd 1 and print their start and shutdown lines there, so fd 1 is stderr
    # while Ray runs.
    saved_stdout = _stdout_to_stderr()

    import ray
    from ray import serve

    from pagerouter.graph.builder import build_app, serve_start_options
    from pagerouter.graph.grpc_front import GrpcFront

    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    t0 = time.perf_counter()
    from pagerouter.graph.replicas import derive_replicas, keep_explicit, machine_now, plan_line, unschedulable

    if args.address:
        try:
            ray.init(address=args.address, log_to_driver=True)
        except (ConnectionError, RuntimeError, ValueError) as exc:  # one line, not Ray's traceback
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            _restore_stdout(saved_stdout)
            return usage_error(f"cannot join the Ray cluster at {args.address}: {first}")
    else:
        extra = {"_metrics_export_port": args.metrics_port} if args.metrics_port else {}
        for name, seconds in SERVE_PROXY_PATIENCE.items():  # the local Ray inherits this environment
            os.environ.setdefault(name, seconds)
        ray.init(num_cpus=num_cpus, include_dashboard=False, log_to_driver=True, **extra)
    front = None
    try:
        machine = machine_now(num_cpus, cluster=bool(args.address))
        if cfg.serve.replicas is not None:
            cfg.serve = derive_replicas(cfg.serve, machine, cfg.serve.replicas)
            how = f"replicas {cfg.serve.replicas}"
        else:  # the default: derive from the machine what the config leaves open
            cfg.serve = keep_explicit(cfg.serve, derive_replicas(cfg.serve, machine, "auto"))
            how = "replicas auto (the config's own numbers kept where it sets them)"
        print(f"pagerouter: {how} for {machine.cores} cores, {machine.ray_cpus:g} Ray CPUs, "
              f"{machine.memory_gb:.1f} GB: {plan_line(cfg.serve)}", file=sys.stderr, flush=True)
        problem, warning = unschedulable(cfg.serve, machine)
        if problem:
            return usage_error(problem)
        if warning:
            print(f"pagerouter: warning: {warning}", file=sys.stderr, flush=True)
        serve.start(**serve_start_options(cfg.serve, grpc_proxy=False, head_only=bool(args.address)))
        # gRPC listens before the app is deployed (as Serve's HTTP proxy does); the handle is
        # looked up on the first call.
        front = GrpcFront(
            lambda: serve.get_app_handle(cfg.serve.app_name), cfg.serve.host, cfg.serve.grpc_port,
            app_name=cfg.serve.app_name, api_key=key, request_timeout_s=cfg.serve.request_timeout_s,
            max_upload_mb=cfg.serve.max_upload_mb, retry_after_s=cfg.limits.retry_after_s,
        )
        front.start()
        app = build_app(cfg, require_api_key=key is not None)
        serve.run(app, name=cfg.serve.app_name, route_prefix=cfg.serve.route_prefix, blocking=False)
        print(
            f"pagerouter: serving in {time.perf_counter() - t0:.1f} s: "
            f"HTTP http://{cfg.serve.host}:{cfg.serve.http_port}  gRPC {cfg.serve.host}:{cfg.serve.grpc_port}  "
            f"API key {'required' if key else 'off'}  (Ctrl-C stops)",
            file=sys.stderr,
            flush=True,
        )
        print(_ray_cli_line(bool(args.address)), file=sys.stderr, flush=True)
        while not stop.wait(0.5):
            pass
        print("pagerouter: stopping", file=sys.stderr, flush=True)
    finally:
        try:
            if front is not None:
                front.stop()
            serve.shutdown()
        finally:
            ray.shutdown()
            _restore_stdout(saved_stdout)
    return EXIT_OK


def _ray_cli_line(cluster: bool) -> str:
    """How to reach this Ray from another shell. A local ray.init turns on token auth, but Ray's CLI
    only sends the token (~/.ray/auth_token) with RAY_AUTH_MODE=token; without it the call fails
    with "RAY_AUTH_MODE is currently 'disabled'", which reads as if the server had auth off."""
    import ray

    address = ray.get_runtime_context().gcs_address
    auth = os.environ.get("RAY_AUTH_MODE", "token" if not cluster else "")
    env = f"RAY_ADDRESS={address}" + (" RAY_AUTH_MODE=token" if auth == "token" else "")
    return (f"pagerouter: Ray CLI from another shell: `{env} ray status`; `ray list ...` and `serve status` "
            "need Ray's dashboard, which pagerouter serve does not start (GET /healthz shows the deployments)")


def _vlm_limits_problem(cfg) -> str | None:
    """One line if a VLM tier's token limits do not fit its model (pagerouter.vlm.model_limits)."""
    tiers = []
    if cfg.ocr.enabled and cfg.ocr.small_reader.kind == "vlm":
        tiers.append(("ocr.small_reader.vlm", cfg.ocr.small_reader.vlm))
    if cfg.ocr.enabled and cfg.ocr.escalation.enabled and cfg.ocr.escalation.kind == "vlm":
        tiers.append(("ocr.escalation.vlm", cfg.ocr.escalation.vlm))
    if not tiers:
        return None
    from pagerouter.vlm.model_limits import VlmLimitError, resolve_limits

    for where, tier in tiers:
        try:
            resolve_limits(cfg.ocr, tier, where, region=where.startswith("ocr.small_reader"))
        except VlmLimitError as exc:
            return str(exc)
    return None


def _stdout_to_stderr() -> int | None:
    """Point fd 1 at stderr (inherited by the processes Ray starts); returns the saved fd 1."""
    try:
        sys.stdout.flush()
        saved = os.dup(1)
        os.dup2(2, 1)
        return saved
    except OSError:  # no real fds (an embedding host): leave stdout alone
        return None


def _restore_stdout(saved: int | None) -> None:
    if saved is not None:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)
