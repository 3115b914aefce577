"""`pagerouter client job submit|status|wait|result|cancel`: long documents as server-side jobs
(HTTP /v1/jobs or the gRPC job rpcs). `submit` prints the job id (stdout) and returns at once;
`wait` polls with progress on stderr until the job ends; `result` prints the document so far
(Markdown rendered locally, as `client convert` does, or JSON), warning when it is partial."""

from __future__ import annotations

import json
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


def add_job_command(csub) -> None:
    cj = csub.add_parser("job", help="long documents as server-side jobs: submit, status, wait, result, cancel")
    cj.add_argument("action", choices=["submit", "status", "wait", "result", "cancel"])
    cj.add_argument("target", help="the file to submit, or the job id")
    add_server_flags(cj)
    cj.add_argument("--format", choices=["md", "json"], default="md", help="result format (default md)")
    cj.add_argument("--pages", help="submit: page selection, e.g. 1-3,7")
    cj.add_argument("--password", help="submit: password for encrypted PDFs")
    cj.add_argument("--config", type=Path, help="config whose `output` section shapes the Markdown")
    cj.add_argument("--timeout", type=float, default=None, help="wait: give up after this many seconds")
    cj.add_argument("--poll-s", type=float, default=2.0, help="wait: seconds between status polls")
    add_option_flags(cj)
    cj.set_defaults(func=cmd_client_job)


def cmd_client_job(args) -> int:
    from pagerouter.clients.errors import PagerouterClientError
    from pagerouter.render.output import to_json, to_markdown

    cfg = load_cli_config(args.config)
    try:
        retry_policy(args)
    except ValueError as exc:
        return usage_error(str(exc))
    try:
        with client_for(args, 120) as client:
            if args.action == "submit":
                if not Path(args.target).is_file():
                    return usage_error(f"{args.target}: no such file")
                status = client.submit_job(
                    args.target, pages=args.pages, password=args.password, ocr=args.ocr, images=args.embed_images,
                    languages=[v for v in (args.lang or "").replace(",", "+").split("+") if v] or None,
                )
                print(status.id)
                return EXIT_OK
            if args.action in ("status", "cancel"):
                status = client.job(args.target) if args.action == "status" else client.cancel_job(args.target)
                print(json.dumps(status.public(), indent=2))
                return EXIT_OK
            if args.action == "wait":
                def progress(s):
                    print(f"\r{s.id[:8]} {s.state}: {s.pages_done}/{s.pages_total or '?'} pages", end="",
                          file=sys.stderr, flush=True)

                status = client.wait_job(args.target, poll_s=args.poll_s, timeout=args.timeout, on_progress=progress)
                print(file=sys.stderr)
                print(json.dumps(status.public(), indent=2))
                return EXIT_OK if status.state == "done" else EXIT_PAGES_FAILED
            result = client.job_result(args.target)
    except PagerouterClientError as exc:
        return client_error_exit(exc)
    except Exception as exc:  # noqa: BLE001 - connection refused, timeouts: one line, no traceback
        return client_error_exit(exc, f"cannot reach the server: {type(exc).__name__}: {str(exc)[:200]}")
    s = result.status
    if result.document is None:
        print(f"pagerouter: error: job {s.id} is {s.state}: no pages yet" + (f" ({s.errors[0]})" if s.errors else ""),
              file=sys.stderr)
        return EXIT_PAGES_FAILED
    if result.partial:
        print(f"pagerouter: warning: job {s.id} is {s.state}: partial result, "
              f"{len(result.document.pages)}/{s.pages_total or '?'} pages", file=sys.stderr)
    doc = result.document
    out = to_markdown(doc, cfg.output, images_rel_to=Path.cwd()) if args.format == "md" else to_json(doc)
    sys.stdout.write(out if out.endswith("\n") else out + "\n")
    return EXIT_PAGES_FAILED if any(p.status == "failed" for p in doc.pages) else EXIT_OK
