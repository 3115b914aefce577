"""`pagerouter` command line: `convert`, `triage`, `batch` (pagerouter/batch/) and `bench` (pagerouter/bench/) here, in the core package (no Ray).

Serving commands come from the installed packages beside the core, found through the
`pagerouter.commands` entry points (pyproject.toml): `serve` (graph/serve_command.py) and
`client convert` (clients/client_command.py). The core never imports them, and a plain
`pagerouter convert` never imports Ray.

Exit codes: `EXIT_CODES_HELP` in common.py, printed by `pagerouter --help` (and in the README).
Every subcommand takes `-q` (errors only) and `-v`/`-vv` (INFO/DEBUG of pagerouter's loggers).
A subcommand whose extra is not installed names it (`pip install "pagerouter[serve]"`), whether
its entry point fails to load or the command fails on the missing package when it runs.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from pagerouter.cli.common import (  # noqa: F401 - re-exported: `pagerouter client` and batch use them
    EXIT_CODES_HELP,
    EXIT_INPUT,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_PAGES_FAILED,
    EXIT_USAGE,
    add_option_flags,
    add_verbosity_flags,
    load_cli_config,
    missing_extra,
    option_problem,
    option_values,
    setup_logging,
    usage_error,
)


def _add_common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--pages", help="page selection, e.g. 1-3,7 (1-based)")
    p.add_argument("--password", help="password for encrypted PDFs")
    p.add_argument("--config", type=Path, help="pagerouter YAML config (or a Serve config with args.config)")


def build_parser() -> argparse.ArgumentParser:
    from pagerouter import __version__

    ap = argparse.ArgumentParser(prog="pagerouter", description="PDFs and page images to Markdown and JSON.",
                                 epilog=EXIT_CODES_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--version", action="version", version=f"pagerouter {__version__}")
    sub = ap.add_subparsers(dest="command", required=True)

    c = sub.add_parser("convert", help="convert files to Markdown and/or JSON")
    c.add_argument("inputs", nargs="+", type=Path,
                   help="PDF or image files (PNG, JPEG, TIFF); - reads one document from stdin")
    c.add_argument("-o", "--outdir", type=Path,
                   help="write one output per input here (default, or -o -: stdout, for one input)")
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

    for name, add_command in _plugin_commands():
        if isinstance(add_command, ImportError):
            _add_missing_command(sub, name, add_command)
        else:
            add_command(sub)
    for parser in _leaf_parsers(ap):
        add_verbosity_flags(parser)
        if parser is not ap and parser.epilog is None and parser.formatter_class is argparse.HelpFormatter:
            parser.epilog, parser.formatter_class = EXIT_CODES_HELP, argparse.RawDescriptionHelpFormatter
    return ap


def _plugin_commands() -> list[tuple[str, object]]:
    """(name, `add_command(subparsers)`) of the installed `pagerouter.commands` entry points; for one
    that fails to load (its extra not installed), its ImportError: the command is still listed and
    says what to install, and the core commands still work."""
    from importlib.metadata import entry_points

    found: list[tuple[str, object]] = []
    for ep in sorted(entry_points(group="pagerouter.commands"), key=lambda e: e.name):
        try:
            found.append((ep.name, ep.load()))
        except ImportError as exc:
            found.append((ep.name, exc))
    return found


def _add_missing_command(sub, name: str, exc: ImportError) -> None:
    """`pagerouter NAME ...` for a command whose entry point could not load: one line naming the extra
    (the extra of the missing package, else the extra named like the command) and exit 2."""
    message = missing_extra(name, exc) or missing_extra(name, exc, extra=name)
    p = sub.add_parser(name, help=f"(not installed: {message.split(': ', 1)[1]})", add_help=False)
    p.add_argument("args", nargs=argparse.REMAINDER)

    def refuse(_args) -> int:
        return usage_error(message)

    p.set_defaults(func=refuse, takes_anything=True)


def _leaf_parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """The parsers that run a command: each subcommand's, or its own subcommands' (`client convert`)."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        return [parser]
    return [leaf for action in subs for child in dict.fromkeys(action.choices.values()) for leaf in _leaf_parsers(child)]


def main(argv: list[str] | None = None) -> int:
    from pagerouter.common.pymupdf_setup import skip_pymupdf_layout

    skip_pymupdf_layout()  # this process is ours: before anything imports pymupdf
    ap = build_parser()
    args, unknown = ap.parse_known_args(argv)
    if unknown and not getattr(args, "takes_anything", False):  # what parse_args does; a missing command takes anything
        ap.error(f"unrecognized arguments: {' '.join(unknown)}")
    restore_logging = setup_logging(args)
    try:
        return _run_command(args)
    finally:
        restore_logging()


def _run_command(args) -> int:
    try:
        if args.command == "convert":
            return cmd_convert(args)
        if args.command == "triage":
            return cmd_triage(args)
        return args.func(args)
    except KeyboardInterrupt:
        print("pagerouter: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return EXIT_OK
    except SystemExit:
        raise
    except ImportError as exc:
        if message := missing_extra(_command_name(args), exc):
            return usage_error(message)
        return _internal_error(exc)
    except Exception as exc:  # noqa: BLE001 - one line, never a traceback (PAGEROUTER_DEBUG=1 shows it)
        return _internal_error(exc)


def _command_name(args) -> str:
    return " ".join(v for v in (args.command, getattr(args, "client_command", None)) if isinstance(v, str))


def _internal_error(exc: BaseException) -> int:
    import os

    if os.environ.get("PAGEROUTER_DEBUG"):
        raise exc
    print(f"pagerouter: internal error: {type(exc).__name__}: {exc} (set PAGEROUTER_DEBUG=1 for details)",
          file=sys.stderr)
    return EXIT_INTERNAL


def _load_cfg(args):
    return load_cli_config(args.config, getattr(args, "page_markers", False))


class ProgressBar:
    """A `Converter` progress callback (`bar(page, done, total)`) drawing tqdm's bar on stderr, only
    when stderr is a terminal and the document has more than one page."""

    def __init__(self, label: str, enabled: bool):
        self.label = label
        self.enabled = enabled and sys.stderr.isatty()
        self.bar = None

    def __call__(self, _page, done: int, total: int) -> None:
        if not self.enabled or total < 2:
            return
        if self.bar is None:
            from tqdm import tqdm

            class Bar(tqdm):
                monitor_interval = 0  # no monitor thread: forking isolation workers wants a single thread

            self.bar = Bar(total=total, desc=self.label[:30], unit="page", file=sys.stderr, leave=False,
                            dynamic_ncols=True)
        self.bar.update(done - self.bar.n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


STDIO = Path("-")
"""`-` as an input reads the document from stdin; `-o -` writes to stdout (the default for one input)."""


def _stem(path: Path) -> str:
    """The name an input's outputs get in -o OUTDIR (`stdin.md` for `-`)."""
    return "stdin" if path == STDIO else path.stem


def cmd_convert(args) -> int:
    from pagerouter.convert.converter import Converter

    cfg = _load_cfg(args)
    if args.outdir == STDIO:
        args.outdir = None  # stdout, not a folder named `-`
    if args.inputs.count(STDIO) > 1:
        return usage_error("- (stdin) can be read once")
    if STDIO in args.inputs and getattr(args, "review", False):
        return usage_error("--review renders pages from the input files: give files, not - (stdin)")
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
            if _stem(path) in stems:
                return usage_error(f"{stems[_stem(path)]} and {path} would both write {args.outdir / _stem(path)}.*")
            stems[_stem(path)] = path
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
    if problem := _page_syntax_problem(args.pages):
        return usage_error(problem)
    docs, code = [], EXIT_OK
    for path in args.inputs:
        source = sys.stdin.buffer.read() if path == STDIO else path  # `-`: the document's bytes, named `-`
        if args.filter and _filtered_out(path, cfg, args.password, source if path == STDIO else None):
            continue
        bar = ProgressBar(_stem(path) if path == STDIO else path.name, not args.quiet)
        try:
            doc = converter.convert(
                source, name=str(path), pages=args.pages, password=args.password, images_dir=args.images,
                progress=bar, wait=escalation.mode, escalation_wait_s=args.escalation_wait_s, **option_values(args),
            )
        except InputError as exc:
            print(f"pagerouter: error: {exc}", file=sys.stderr)
            code = EXIT_INPUT
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
                target = args.outdir / (_stem(path) + ext)
                try:
                    target.write_text(text, encoding="utf-8")
                except OSError as exc:
                    print(f"pagerouter: error: {target}: cannot write: {exc.strerror or exc}", file=sys.stderr)
                    code = EXIT_INPUT
            if getattr(args, "review", False):
                from pagerouter.cli.review import convert_review_images

                convert_review_images(args, converter.pages, path, doc)
    if docs and getattr(args, "review", False):
        from pagerouter.cli.review import write_convert_review

        write_convert_review(args, cfg, converter.pages)
    if docs and not args.quiet:
        print(route_summary_table(docs, wall_s=time.perf_counter() - t0), file=sys.stderr)
    return code


def _page_syntax_problem(spec: str | None) -> str | None:
    """A --pages selection that no document could satisfy (`0`, `2-1`, `x`): a usage error (exit 2)
    before any file is read. One past a given document's end is that input's error (exit 1)."""
    from pagerouter.intake.inputs import InputError, page_ranges

    try:
        for _ in page_ranges(spec or "1-", "--pages"):
            pass
    except InputError as exc:
        return str(exc)
    return None


def _filtered_out(path: Path, cfg, password: str | None, data: bytes | None = None) -> bool:
    """Whether the document filter rejects `path` (or `data`, the bytes read from stdin for `-`; it
    then prints one line naming the file and the reasons, on stderr, so stdout holds no output for
    it). An unreadable file is left to the converter."""
    from pagerouter.intake.docfilter import judge_file

    try:
        data = path.read_bytes() if data is None else data
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
    if problem := _page_syntax_problem(args.pages):
        return usage_error(problem)
    try:
        src = open_source(args.input, password=args.password)
        numbers = parse_pages(args.pages, src.page_count, src.name)
    except InputError as exc:
        print(f"pagerouter: error: {exc}", file=sys.stderr)
        return EXIT_INPUT
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

    from pagerouter.common.pagetext import extract_textdict
    from pagerouter.flow.page_status import damage_found, unreadable_before_text
    from pagerouter.intake.page_limits import page_text_problem
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
