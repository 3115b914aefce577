"""`pagerouter client convert`: send a file to a running server over HTTP or gRPC and print
exactly what `pagerouter convert` prints for it (the Markdown is rendered locally from the same
Document). The API key comes from PAGEROUTER_API_KEY or PAGEROUTER_API_KEY_FILE, as on the
server. Registered as a `pagerouter.commands` entry point (see pagerouter/cli/main.py).
"""

from __future__ import annotations

import sys
from pathlib import Path

from pagerouter.clients.command_flags import add_server_flags, client_for, retry_policy
from pagerouter.cli.common import (
    EXIT_OK,
    EXIT_PAGES_FAILED,
    add_option_flags,
    client_error_exit,
    load_cli_config,
    usage_error,
)

DEFAULT_TIMEOUT_S = 600.0
BULK_TIMEOUT_S = 3600.0  # a bulk request may hold pages for the tier's bulk bound (default 900 s) each
# The server words a missing password for API callers (deployments/ingress.py); this command has a flag.
_API_PASSWORD_HINT = "(send it in the request's `password` field)"


def add_command(sub) -> None:
    c = sub.add_parser("client", help="talk to a running pagerouter server")
    csub = c.add_subparsers(dest="client_command", required=True)
    cc = csub.add_parser("convert", help="convert a file on a server; prints what `pagerouter convert` prints")
    cc.add_argument("input", type=Path, help="PDF or image file")
    add_server_flags(cc)
    cc.add_argument("--format", choices=["md", "json"], default="md", help="output format (default md)")
    cc.add_argument("--pages", help="page selection, e.g. 1-3,7 (1-based)")
    cc.add_argument("--password", help="password for encrypted PDFs")
    cc.add_argument("--config", type=Path, help="config whose `output` section shapes the Markdown")
    cc.add_argument("--page-markers", action="store_true", help="mark page boundaries in the Markdown")
    cc.add_argument("--stream", action="store_true", help="use the streaming API (pages arrive as they finish)")
    cc.add_argument(
        "--wait", choices=["interactive", "bulk"], default=None,
        help="how long flagged pages wait for the escalation tier to wake and answer: interactive (the server's "
        "default, serve.escalation_timeout_s) or bulk (serve.escalation_timeout_bulk_s)",
    )
    cc.add_argument(
        "--escalation-wait-s", type=float, metavar="SECONDS",
        help="wait at most this long for the escalation tier (capped by the server at the --wait mode's bound)",
    )
    cc.add_argument(
        "--timeout", type=float, default=None,
        help=f"seconds before the request is abandoned (default {DEFAULT_TIMEOUT_S:g}, "
        f"{BULK_TIMEOUT_S:g} with --wait bulk)",
    )
    add_option_flags(cc)
    cc.epilog = ("The API key of a server that requires one is read from PAGEROUTER_API_KEY, or from the file "
                 "named by PAGEROUTER_API_KEY_FILE (never from a flag, so it stays out of shell history).")
    cc.set_defaults(func=cmd_client_convert)
    from pagerouter.clients.job_command import add_job_command

    add_job_command(csub)


def cmd_client_convert(args) -> int:
    from pagerouter.clients.errors import PagerouterClientError
    from pagerouter.render.output import route_summary_table, to_json, to_markdown

    cfg = load_cli_config(args.config, args.page_markers)
    try:
        retry_policy(args)
    except ValueError as exc:
        return usage_error(str(exc))
    if not args.input.is_file():
        return usage_error(f"{args.input}: no such file")
    if args.escalation_wait_s is not None and not args.escalation_wait_s > 0:
        return usage_error(f"--escalation-wait-s must be a positive number of seconds, not {args.escalation_wait_s:g}")
    timeout = args.timeout if args.timeout is not None else BULK_TIMEOUT_S if args.wait == "bulk" else DEFAULT_TIMEOUT_S
    kw = {"filename": str(args.input), "pages": args.pages, "password": args.password, "wait": args.wait,
          "escalation_wait_s": args.escalation_wait_s, "ocr": args.ocr, "images": args.embed_images,
          "languages": [v for v in (args.lang or "").replace(",", "+").split("+") if v] or None}
    try:
        with client_for(args, timeout) as client:
            doc = client.convert_streamed(args.input, **kw) if args.stream else client.convert(args.input, **kw)
    except PagerouterClientError as exc:
        if exc.code in ("bad_input", "bad_pages", "bad_request"):
            return client_error_exit(exc, exc.message.replace(_API_PASSWORD_HINT, "(--password)"))
        return client_error_exit(exc)
    except Exception as exc:  # noqa: BLE001 - connection refused, timeouts: one line, no traceback
        return client_error_exit(exc, f"cannot reach the server: {type(exc).__name__}: {str(exc)[:200]}")
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

