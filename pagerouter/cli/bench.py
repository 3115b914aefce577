"""`pagerouter bench [CORPUS...] -o OUTDIR` (wired in pagerouter/cli/main.py): the router against text
layer only, RapidOCR on every page, Tesseract on every page and pymupdf4llm, side by side.
Exit codes: 0 report written, 2 usage error (or no system could run)."""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import shlex
import sys
from pathlib import Path

from ..bench import SYSTEM_NAMES  # not from systems.py: its imports are heavy, and every command builds this parser

DEFAULT_PAGES = 20  # a few minutes for all five systems on 2 cores
REAL_CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus" / "real"


def add_bench_parser(sub) -> None:
    b = sub.add_parser("bench", help="compare the router with text-layer-only, OCR-every-page and pymupdf4llm")
    b.add_argument("corpus", nargs="*", type=Path, metavar="CORPUS",
                   help="PDF files or folders to measure (no known text: speed, routes and cost only); "
                   "default: the generated mixed corpus")
    b.add_argument("-o", "--outdir", type=Path, required=True,
                   help="writes report.md, report.json, charts/*.png and the generated corpus (corpus/) here")
    b.add_argument("--generated", action="store_true",
                   help="also run the generated corpus when CORPUS or --real is given (it runs by default otherwise)")
    b.add_argument("--generated-pages", dest="pages", type=int, default=DEFAULT_PAGES, metavar="N",
                   help=f"pages in the generated corpus (default {DEFAULT_PAGES})")
    # `--pages` is a page selection in every other command; its old meaning here stays for scripts
    b.add_argument("--pages", dest="pages", type=int, help=argparse.SUPPRESS)
    b.add_argument("--born-digital-share", type=float, default=0.7,
                   help="share of born-digital pages in the generated corpus (default 0.7; the rest cycles "
                   "through lying text layers, scans without a layer and glyph-id garbage)")
    b.add_argument("--short-pages", action="store_true",
                   help="generated pages are A6 with two sentences each instead of A4 pages of text (quick smoke runs)")
    b.add_argument("--seed", type=int, default=7, help="seed of the generated corpus (default 7)")
    b.add_argument("--real", nargs="?", type=Path, const=REAL_CORPUS, metavar="DIR",
                   help="also measure a real corpus (default folder: shared/corpus/real beside the checkout)")
    b.add_argument("--max-pages", type=int, metavar="N",
                   help="cap on the pages taken from CORPUS and --real each (spread over the files)")
    b.add_argument("--systems", default=",".join(SYSTEM_NAMES),
                   help=f"comma-separated systems to run (default all: {','.join(SYSTEM_NAMES)})")
    b.add_argument("--config", type=Path, help="pagerouter YAML config: the router's settings and the bench prices")
    b.set_defaults(func=cmd_bench)


def cmd_bench(args) -> int:
    from .common import EXIT_OK, EXIT_USAGE, load_cli_config, usage_error
    from ..bench.corpus import generate, real_corpus
    from ..bench.report import markdown, write_charts, write_json
    from ..bench.runner import headline, headline_line, run_bench

    names = [n.strip() for n in args.systems.split(",") if n.strip()]
    unknown = [n for n in names if n not in SYSTEM_NAMES]
    if unknown or not names:
        return usage_error(f"--systems: unknown {', '.join(unknown) or '(none given)'}; known: {', '.join(SYSTEM_NAMES)}")
    if args.pages < 1 or not 0.0 <= args.born_digital_share <= 1.0:
        return usage_error("--pages must be >= 1 and --born-digital-share within 0..1")
    if args.max_pages is not None and args.max_pages < 1:
        return usage_error("--max-pages must be >= 1")
    for p in args.corpus + ([args.real] if args.real else []):
        if not p.exists():
            return usage_error(f"{p}: no such file or folder")
    cfg = load_cli_config(args.config, False)
    try:
        args.outdir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return usage_error(f"{args.outdir}: cannot create output directory: {exc.strerror or exc}")

    corpora = []
    if args.generated or not (args.corpus or args.real):
        corpora.append(generate(args.outdir / "corpus", args.pages, args.seed, args.born_digital_share,
                                args.short_pages))
    if args.corpus:
        corpora.append(real_corpus(args.corpus, args.max_pages, name="given"))
    if args.real:
        corpora.append(real_corpus([args.real], args.max_pages, name="real"))
    corpora = [c for c in corpora if c.page_count]
    if not corpora:
        return usage_error("no pages to measure (the given corpus holds no readable PDF page)")

    result = run_bench(corpora, names, cfg)
    if not any("skipped" not in s for s in result["systems"].values()):
        print("pagerouter bench: error: no system could run", file=sys.stderr)
        return EXIT_USAGE
    result["run"] = {
        "command": "pagerouter " + " ".join(shlex.quote(a) for a in sys.argv[1:]) if sys.argv[1:2] == ["bench"]
        else "pagerouter bench (called in-process)",
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, {platform.system()} {platform.release()}, "
                   f"Python {platform.python_version()}",
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "prices": cfg.bench.model_dump(),
        "systems": names,
    }
    problems = write_charts(result, args.outdir / "charts")
    for p in problems:
        print(f"pagerouter bench: {p}", file=sys.stderr)
    write_json(result, args.outdir / "report.json")
    (args.outdir / "report.md").write_text(markdown(result, problems), encoding="utf-8")
    for c in result["corpora"]:
        h = headline(result, c["name"])
        if h:
            print(headline_line(h))
    print(f"report: {args.outdir / 'report.md'}")
    return EXIT_OK
