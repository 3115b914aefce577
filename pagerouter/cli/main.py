"""`pagerouter` command line: `convert`, `triage`, `batch` (pagerouter/batch/) and `bench` (pagerouter/bench/) here, in the core package (no Ray).

Serving commands come from the installed packages beside the core, found through the
`pagerouter.commands` entry points (pyproject.toml): `serve` (graph/serve_command.py) and
`client convert` (clients/client_command.py). The core never imports them, and a plain
`pagerouter convert` never imports Ray.

Exit codes (also in the README):
  0  every page of every input came out (ok or flagged)
  1  some pages failed (they are still in the output, with status `failed` and the error)
  2  usage error, or an input could not be opened at all
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from pagerouter.cli.common import (  # noqa: F401 - re-exported: `pagerouter client` and batch use them
    EXIT_OK,
    EXIT_PAGES_FAILED,
    EXIT_USAGE,
    add_option_flags,
    load_cli_config,
    option_problem,
    option_values,
    usage_error,
)


def _add_common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--pages", help="page selection, e.g. 1-3,7 (1-based)")
    p.add_argument("--password", help="password for encrypted PDFs")
    p.add_argument("--config", type=Path, help="pagerouter YAML config (or a Serve config with args.config)")


def build_parser() -> argparse.ArgumentParser:
    from pagerouter import __version__

    ap = argparse.ArgumentParser(prog="pagerouter", description="PDFs and page images to Markdown and JSON.")
    ap.add_argument("--version", action="version", version=f"pagerouter {__version__}")
    sub = ap.add_subparsers(dest="command", required=True)

    c = sub.add_parser("convert", help="convert files to Markdown and/or JSON")
    c.add_argument("inputs", nargs="+", type=Path, help="PDF or image files (PNG, JPEG, TIFF)")
    c.add_argument("-o", "--outdir", type=Path, help="write one output per input here (default: stdout for one input)")
    c.add_argument("--format", choices=["md", "json", "both"], default="md", help="output format (default md)")
    c.add_argument("--images", type=Path, metavar="DIR", help="save figures as PNG files here, linked from the Markdown")
    c.add_argument("--page-markers", action="store_true", help="mark page boundaries in the Markdown")
    c.add_argument("--quiet", "-q", action="store_true", help="no route summary and no progress")
    c.add_argument("--filter", action="store_true",
                   help="judge each input with the document filter (config section `filter`) first; a rejected "
                   "input prints one line with its reasons and writes no output (exit 0)")
    c.add_argument(
        "--wait", choices=["interactive", "bulk"], default="interactive",
        help="how long flagged pages wait for the escalation tier: interactive (default, "
        "serve.escalation_timeout_s) or bulk (serve.escalation_timeout_bulk_s); pass --wait bulk for batch runs",
    )
    c.add_argument(
        "--escalation-wait-s", type=float, metavar="SECONDS",
        help="wait at most this long for the escalation tier (capped at the --wait mode's bound)",
    )
    from pagerouter.cli.review import add_convert_review_flag, add_review_parser

    add_convert_review_flag(c)
    add_option_flags(c)
    _add_common(c)

    t = sub.add_parser("triage", help="print each page's route decision, scores and reasons")
    t.add_argument("input", type=Path)
    t.add_argument("--json", action="store_true", help="print decisions as JSON lines")
    _add_common(t)

    from pagerouter.cli.batch import add_batch_parser

    add_batch_parser(sub, add_option_flags)

    from pagerouter.cli.bench import add_bench_parser

    add_bench_parser(sub)
    add_review_parser(sub)

    for add_command in _plugin_commands():
        add_command(sub)
    return ap


def _plugin_commands() -> list:
    """`add_command(subparsers)` functions of the installed `pagerouter.commands` entry points.
    One that fails to load (its extra not installed) is left out: the core commands still work."""
    from importlib.metadata import entry_points

    found = []
    for ep in sorted(entry_points(group="pagerouter.commands"), key=lambda e: e.name):
        try:
            found.append(ep.load())
        except ImportError:
            continue
    return found


def main(argv: list[str] | None = None) -> int:
    from pagerouter.common.pymupdf_setup import skip_pymupdf_layout

    skip_pymupdf_layout()  # this process is ours: before anything imports pymupdf
    ap = build_parser()
    args = ap.parse_args(argv)
    try:
        if args.command == "convert":
            return cmd_convert(args)
        if args.command == "triage":
            return cmd_triage(args)
        return args.func(args)
    except KeyboardInterrupt:
        print("pagerouter: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except SystemExit:
        raise
    except Exception as exc:  # noqa: BLE001 - one line, never a traceback (PAGEROUTER_DEBUG=1 shows it)
        import os

        if os.environ.get("PAGEROUTER_DEBUG"):
            raise
        print(f"pagerouter: error: {type(exc).__name__}: {exc} (set PAGEROUTER_DEBUG=1 for details)", file=sys.stderr)
        return EXIT_USAGE


def _load_cfg(args):
    return load_cli_config(args.config, getattr(args, "page_markers", False))


class ProgressBar:
    """A one-line progress bar on stderr, only when stderr is a terminal; a `Converter` progress
    callback (`bar(page, done, total)`)."""

    def __init__(self, label: str, enabled: bool):
        self.label = label
        self.enabled = enabled and sys.stderr.isatty()
        self.shown = False
        self.t0 = time.perf_counter()

    def __call__(self, _page, done: int, total: int) -> None:
        if not self.enabled or total < 2:
            return
        width = 30
        filled = int(width * done / total)
        rate = done / max(time.perf_counter() - self.t0, 1e-9)
        sys.stderr.write(f"\r{self.label[:30]:<30} [{'#' * filled}{'.' * (width - filled)}] {done}/{total} {rate:.1f} p/s")
        sys.stderr.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            sys.stderr.write("\r" + " " * 80 + "\r")


def cmd_convert(args) -> int:
    from pagerouter.convert.converter import Converter

    cfg = _load_cfg(args)
    if args.outdir is None and len(args.inputs) > 1:
        return usage_error("several inputs need -o OUTDIR")
    if args.outdir is None and args.format == "both":
        return usage_error("--format both needs -o OUTDIR")
    from pagerouter.cli.review import convert_review_problem

    if problem := convert_review_problem(args):  # --review: needs -o, writes the JSON it reads
        return usage_error(problem)
    if args.outdir is not None:
        stems: dict[str, Path] = {}
        for path in args.inputs:
            if path.stem in stems:
                return usage_error(f"{stems[path.stem]} and {path} would both write {args.outdir / path.stem}.*")
            stems[path.stem] = path
        try:
            args.outdir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            return usage_error(f"{args.outdir}: cannot create output directory: {exc.strerror or exc}")
    converter = Converter(cfg)
    try:
        return _convert_inputs(args, cfg, converter)
    finally:
        converter.close()  # engines stop now: a VLM engine left to interpreter exit spews tracebacks


def _convert_inputs(args, cfg, converter) -> int:
    from pagerouter.intake.inputs import InputError
    from pagerouter.render.output import route_summary_table, to_json, to_markdown

    t0 = time.perf_counter()
    try:
        escalation = converter.escalation_wait(args.wait, args.escalation_wait_s)
        converter.options(**option_values(args))  # refused before any file is read
    except ValueError as exc:
        return usage_error(option_problem(exc))
    docs, code = [], EXIT_OK
    for path in args.inputs:
        if args.filter and _filtered_out(path, cfg, args.password):
            continue
        bar = ProgressBar(path.name, not args.quiet)
        try:
            doc = converter.convert(
                path, pages=args.pages, password=args.password, images_dir=args.images, progress=bar,
                wait=escalation.mode, escalation_wait_s=args.escalation_wait_s, **option_values(args),
            )
        except InputError as exc:
            print(f"pagerouter: error: {exc}", file=sys.stderr)
            code = EXIT_USAGE
            continue
        finally:
            bar.close()
        docs.append(doc)
        for p in doc.pages:
            if p.status == "failed":
                print(f"pagerouter: warning: {p.error}", file=sys.stderr)
                code = max(code, EXIT_PAGES_FAILED)
        outputs = []
        if args.format in ("md", "both"):
            rel = args.outdir if args.outdir else Path.cwd()
            outputs.append((".md", to_markdown(doc, cfg.output, images_rel_to=rel)))
        if args.format in ("json", "both"):
            outputs.append((".json", to_json(doc)))
        if args.outdir is None:
            sys.stdout.write(outputs[0][1] if outputs[0][1].endswith("\n") else outputs[0][1] + "\n")
            sys.stdout.flush()
        else:
            for ext, text in outputs:
                target = args.outdir / (path.stem + ext)
                try:
                    target.write_text(text, encoding="utf-8")
                except OSError as exc:
                    print(f"pagerouter: error: {target}: cannot write: {exc.strerror or exc}", file=sys.stderr)
                    code = EXIT_USAGE
            if getattr(args, "review", False):
                from pagerouter.cli.review import convert_review_images

                convert_review_images(args, path, doc)
    if docs and getattr(args, "review", False):
        from pagerouter.cli.review import write_convert_review

        write_convert_review(args, cfg)
    if docs and not args.quiet:
        print(route_summary_table(docs, wall_s=time.perf_counter() - t0), file=sys.stderr)
    return code


def _filtered_out(path: Path, cfg, password: str | None) -> bool:
    """Whether the document filter rejects `path` (it then prints one line naming the file and the
    reasons, on stderr, so stdout holds no output for it). An unreadable file is left to the converter."""
    from pagerouter.intake.docfilter import judge_file

    try:
        data = path.read_bytes()
    except OSError:
        return False  # the converter reports the missing or unreadable file as usual
    decision = judge_file(data, cfg.filter, isolate=cfg.isolation.enabled, password=password)
    if decision.keep:
        return False
    print(f"pagerouter: filtered: {decision.line(str(path))}", file=sys.stderr)
    return True


def cmd_triage(args) -> int:
    from pagerouter.intake.inputs import InputError, open_source, parse_pages

    cfg = _load_cfg(args)
    try:
        src = open_source(args.input, password=args.password)
        numbers = parse_pages(args.pages, src.page_count, src.name)
    except InputError as exc:
        return usage_error(str(exc))
    try:
        return _print_decisions(src, numbers, cfg, args.json)
    finally:
        src.close()


def _print_decisions(src, numbers, cfg, as_json: bool) -> int:
    """Each page's route decision. A page `convert` could not read (its object lost from a
    truncated file, a page box, content stream or text past the limits, a triage error) is
    `failed` here too, never a route such as `blank`; a page whose PDF objects MuPDF reported
    damaged is `flagged` with `damaged_page`, as `convert` flags it (pagerouter/flow/pipeline.py runs
    the same checks, from page_status.py and page_limits.py, before and after triage)."""
    import json

    import pymupdf

    from pagerouter.intake.page_limits import page_text_problem
    from pagerouter.flow.page_status import damage_found, unreadable_before_text
    from pagerouter.common.pagetext import extract_textdict
    from pagerouter.triage import triage_page

    code = EXIT_OK
    limits = cfg.limits
    for n in numbers:
        stage = "reading"
        problem, damaged = "", ""
        try:
            pymupdf.TOOLS.reset_mupdf_warnings()
            page = src.doc.load_page(n - 1)
            problem = unreadable_before_text(page, limits)
            if not problem:
                textdict = extract_textdict(page)
                problem = page_text_problem(textdict, limits.max_page_chars)
            if not problem:
                stage = "triage"
                d = triage_page(page, textdict, cfg.triage, cfg.ocr)
                damaged = damage_found(page, src.open_warnings + "\n" + pymupdf.TOOLS.mupdf_warnings())
        except Exception as exc:  # noqa: BLE001
            problem = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        if problem:
            error = f"{src.name}: page {n}: {stage} failed: {problem[:300]}"
            print(f"pagerouter: error: {error}", file=sys.stderr)
            code = EXIT_PAGES_FAILED
            if as_json:
                print(json.dumps({"page": n, "status": "failed", "route": None, "error": error}))
            else:
                print(f"page {n}: failed ({stage} failed: {problem[:300]})")
            continue
        status = "flagged" if damaged else "ok"
        if as_json:
            extra = {"flags": ["damaged_page"], "damage": f"{src.name}: page {n}: {damaged}"} if damaged else {}
            print(json.dumps({"page": n, "status": status, **d.model_dump(), **extra}))
            continue
        scores = " ".join(f"{k}={v:.3g}" for k, v in d.scores.items())
        print(f"page {n}: {d.route}" + (f" (script {d.script})" if d.script else "")
              + (" [flagged: damaged_page]" if damaged else ""))
        print(f"  scores: {scores}")
        if damaged:
            print(f"  - damaged_page: {damaged}")
        for r in d.reasons:
            print(f"  - {r}")
    return code


if __name__ == "__main__":
    raise SystemExit(main())
