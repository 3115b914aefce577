"""`pagerouter` command line.

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

EXIT_OK, EXIT_PAGES_FAILED, EXIT_USAGE = 0, 1, 2


def _add_common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--pages", help="page selection, e.g. 1-3,7 (1-based)")
    p.add_argument("--password", help="password for encrypted PDFs")
    p.add_argument("--config", type=Path, help="pagerouter YAML config (or a Serve config with args.config)")


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="pagerouter", description="PDFs and page images to Markdown and JSON.")
    sub = ap.add_subparsers(dest="command", required=True)

    c = sub.add_parser("convert", help="convert files to Markdown and/or JSON")
    c.add_argument("inputs", nargs="+", type=Path, help="PDF or image files (PNG, JPEG, TIFF)")
    c.add_argument("-o", "--outdir", type=Path, help="write one output per input here (default: stdout for one input)")
    c.add_argument("--format", choices=["md", "json", "both"], default="md", help="output format (default md)")
    c.add_argument("--images", type=Path, metavar="DIR", help="save figures as PNG files here, linked from the Markdown")
    c.add_argument("--page-markers", action="store_true", help="mark page boundaries in the Markdown")
    c.add_argument("--quiet", "-q", action="store_true", help="no route summary and no progress")
    _add_common(c)

    t = sub.add_parser("triage", help="print each page's route decision, scores and reasons")
    t.add_argument("input", type=Path)
    t.add_argument("--json", action="store_true", help="print decisions as JSON lines")
    _add_common(t)

    try:  # serving commands arrive with the Serve graph; the core CLI works without them
        from .serve_cli import add_serve_commands

        add_serve_commands(sub)
    except ImportError:
        pass
    return ap


def main(argv: list[str] | None = None) -> int:
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
    from pagerouter.config import load_config

    try:
        cfg = load_config(args.config)
    except (ValueError, FileNotFoundError) as exc:
        raise SystemExit(_usage_error(str(exc)))
    except Exception as exc:  # pydantic ValidationError
        raise SystemExit(_usage_error(f"{args.config}: invalid config: {exc}"))
    if getattr(args, "page_markers", False):
        cfg.output.page_markers = True
    return cfg


def _usage_error(msg: str) -> int:
    print(f"pagerouter: error: {msg}", file=sys.stderr)
    return EXIT_USAGE


class _Progress:
    """A one-line progress bar on stderr, only when stderr is a terminal."""

    def __init__(self, label: str, total: int, enabled: bool):
        self.label, self.total, self.done = label, total, 0
        self.enabled = enabled and total > 1 and sys.stderr.isatty()
        self.t0 = time.perf_counter()

    def step(self, _page=None) -> None:
        self.done += 1
        if not self.enabled:
            return
        width = 30
        filled = int(width * self.done / self.total)
        rate = self.done / max(time.perf_counter() - self.t0, 1e-9)
        sys.stderr.write(
            f"\r{self.label[:30]:<30} [{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} {rate:.1f} p/s"
        )
        sys.stderr.flush()

    def close(self) -> None:
        if self.enabled:
            sys.stderr.write("\r" + " " * 80 + "\r")


def cmd_convert(args) -> int:
    from pagerouter.inputs import InputError
    from pagerouter.render import route_summary_table, to_json, to_markdown

    cfg = _load_cfg(args)
    if args.outdir is None and len(args.inputs) > 1:
        return _usage_error("several inputs need -o OUTDIR")
    if args.outdir is None and args.format == "both":
        return _usage_error("--format both needs -o OUTDIR")
    if args.outdir is not None:
        stems: dict[str, Path] = {}
        for path in args.inputs:
            if path.stem in stems:
                return _usage_error(f"{stems[path.stem]} and {path} would both write {args.outdir / path.stem}.*")
            stems[path.stem] = path
        try:
            args.outdir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            return _usage_error(f"{args.outdir}: cannot create output directory: {exc.strerror or exc}")
    converter = _converter()
    docs, code = [], EXIT_OK
    for path in args.inputs:
        try:
            doc = converter(path, cfg, args, _Progress)
        except InputError as exc:
            print(f"pagerouter: error: {exc}", file=sys.stderr)
            code = EXIT_USAGE
            continue
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
    if docs and not args.quiet:
        print(route_summary_table(docs), file=sys.stderr)
    return code


def _converter():
    """The conversion function `convert` uses: the Serve graph in-process when it is
    installed (so the CLI and the server cannot disagree), else the core pipeline."""
    try:
        from graph.local import convert_with_graph  # noqa: F401

        return convert_with_graph
    except ImportError:
        return _convert_core


def _convert_core(path: Path, cfg, args, progress_cls):
    import asyncio

    from pagerouter.inputs import open_source, parse_pages
    from pagerouter.local import convert_source_async

    src = open_source(path, password=args.password)
    try:
        numbers = parse_pages(args.pages, src.page_count, src.name)
        bar = progress_cls(path.name, len(numbers), not args.quiet)
        try:
            return asyncio.run(convert_source_async(src, cfg, numbers, images_dir=args.images, on_page=bar.step))
        finally:
            bar.close()
    finally:
        src.close()


def cmd_triage(args) -> int:
    from pagerouter.inputs import InputError, open_source, parse_pages

    cfg = _load_cfg(args)
    try:
        src = open_source(args.input, password=args.password)
        numbers = parse_pages(args.pages, src.page_count, src.name)
    except InputError as exc:
        return _usage_error(str(exc))
    try:
        return _print_decisions(src, numbers, cfg, args.json)
    finally:
        src.close()


def _print_decisions(src, numbers, cfg, as_json: bool) -> int:
    import json

    from pagerouter.pagetext import extract_textdict
    from pagerouter.triage import triage_page

    code = EXIT_OK
    for n in numbers:
        try:
            page = src.doc.load_page(n - 1)
            d = triage_page(page, extract_textdict(page), cfg.triage)
        except Exception as exc:  # noqa: BLE001
            print(f"pagerouter: error: {src.name}: page {n}: triage failed: {exc}", file=sys.stderr)
            code = EXIT_PAGES_FAILED
            continue
        if as_json:
            print(json.dumps({"page": n, **d.model_dump()}))
            continue
        scores = " ".join(f"{k}={v:.3g}" for k, v in d.scores.items())
        print(f"page {n}: {d.route}" + (f" (script {d.script})" if d.script else ""))
        print(f"  scores: {scores}")
        for r in d.reasons:
            print(f"  - {r}")
    return code


if __name__ == "__main__":
    raise SystemExit(main())
