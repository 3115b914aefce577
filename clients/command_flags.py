"""The flags every server-calling command shares (`client convert`, `client job`, `batch
--endpoint/--grpc`): where the server is, how long a busy one is asked again, and the client
they name. Pydantic and argparse only, so a parser offers them before any client package loads."""

from __future__ import annotations

import argparse


def add_server_flags(p: argparse.ArgumentParser) -> None:
    """Where the server is (--endpoint or --grpc, as `pagerouter batch` names them) and how long a
    busy server is asked again. `--url` is the old name of --endpoint, kept out of --help so
    scripts written for it keep working."""
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument("--endpoint", metavar="URL", help="the server's HTTP base URL, e.g. http://127.0.0.1:8000")
    where.add_argument("--url", dest="endpoint", help=argparse.SUPPRESS)
    where.add_argument("--grpc", metavar="HOST:PORT", help="gRPC address, e.g. 127.0.0.1:9000")
    p.add_argument("--application", default="pagerouter", help="Serve application name (gRPC routing)")
    add_retry_flags(p)


def add_retry_flags(p: argparse.ArgumentParser) -> None:
    """--max-attempts and --retry-deadline: clients/retry_policy.py's RetryPolicy as flags (read back
    with `retry_policy(args)`); pydantic only, so a parser can offer them before any client loads."""
    from pagerouter.clients.retry_policy import RetryPolicy

    defaults = RetryPolicy()
    p.add_argument(
        "--max-attempts", type=int, default=defaults.max_attempts, metavar="N",
        help=f"send a request at most N times while the server answers busy (429/503 or gRPC UNAVAILABLE/"
        f"RESOURCE_EXHAUSTED with a retry hint), waiting what it asks (default {defaults.max_attempts}; 1 = never retry)",
    )
    p.add_argument(
        "--retry-deadline", type=float, default=defaults.deadline_s, metavar="SECONDS",
        help=f"start no attempt later than this many seconds after the first (default {defaults.deadline_s:g})",
    )


def retry_policy(args):
    """The RetryPolicy of --max-attempts/--retry-deadline; ValueError with a one-line message when out of range."""
    from pagerouter.clients.retry_policy import RetryPolicy

    if args.max_attempts < 1 or not args.retry_deadline > 0:
        raise ValueError("--max-attempts must be 1 or more and --retry-deadline a positive number of seconds")
    return RetryPolicy(max_attempts=args.max_attempts, deadline_s=args.retry_deadline)


def client_for(args, timeout: float):
    """The HTTP or gRPC client the flags name; MissingDependency (naming the extra) when its package is absent."""
    from pagerouter.clients.deps import load_client

    retry = retry_policy(args)
    if args.endpoint:
        return load_client("http").PagerouterHttpClient(args.endpoint, timeout=timeout, retry=retry)
    return load_client("grpc").PagerouterGrpcClient(args.grpc, timeout=timeout, application=args.application,
                                                    retry=retry)
