"""`pagerouter review OUT [-o review.html]` (wired in pagerouter/cli/main.py), and the pieces
`pagerouter convert --review` calls: page images rendered while converting, then the review.

Exit codes: 0 review written, 2 usage error (no folder, or no pagerouter JSON in it).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

IMAGE_MODES = ("files", "embed", "none")


def add_review_parser(sub) -> None:
    r = sub.add_parser("review", help="write an HTML review of a convert -o / batch output folder")
    r.add_argument("run_dir", type=Path, metavar="OUT", help="the output folder of `convert -o` or `batch` (its .json files)")
    r.add_argument("-o", "--output", type=Path, metavar="HTML", help="where to write the review (default OUT/review.html)")
    r.add_argument("--pdf-dir", type=Path, metavar="DIR",
                   help="find the source files here to render page images (default: the batch journal's inputs, "
                   "then the source named in each JSON, relative to OUT)")
    r.add_argument("--images", choices=IMAGE_MODES, default="files",
                   help="page images as JPEG files in OUT/review-images/ (default), embedded as data: URIs "
                   "(one file to share; large runs get large), or none")
    r.add_argument("--dpi", type=int, default=None, help="page image resolution (default 72)")
    r.add_argument("--password", help="password for encrypted source PDFs")
    r.add_argument("--config", type=Path, help="pagerouter YAML config: Markdown settings and the bench prices for $/M")
    r.add_argument("--quiet", "-q", action="store_true", help="no summary line")
    r.set_defaults(func=cmd_review)


def cmd_review(args) -> int:
    from ..isolation import page_work
    from ..review.html_writer import write_review
    from ..review.page_images import DEFAULT_DPI
    from ..review.run_folder import load_run
    from .common import EXIT_OK, load_cli_config, usage_error

    if not args.run_dir.is_dir():
        return usage_error(f"{args.run_dir}: not a folder")
    if args.dpi is not None and not 10 <= args.dpi <= 300:
        return usage_error("--dpi must be within 10..300")
    cfg = load_cli_config(args.config, False)
    docs = load_run(args.run_dir, args.pdf_dir)
    if not docs:
        return usage_error(f"{args.run_dir}: no pagerouter JSON found (convert with --format json or both)")
    html_path = args.output or args.run_dir / "review.html"
    work = page_work(cfg)  # MuPDF on the source files runs in isolation workers, as convert's does
    try:
        images, missing = _page_images(work, docs, args.run_dir, html_path.parent, args.images,
                                       args.dpi or DEFAULT_DPI, args.password)
    finally:
        work.close()
    write_review(html_path, docs, page_images=images, output_cfg=cfg.output, prices=cfg.bench,
                 title=args.run_dir.resolve().name)
    if not args.quiet:
        pages = sum(len(d.doc.pages) for d in docs)
        line = f"pagerouter: review: {html_path} ({len(docs)} document(s), {pages} page(s), {len(images)} with an image)"
        if missing and args.images != "none":
            line += f"; no source file for {len(missing)} document(s) (e.g. {missing[0]}): pass --pdf-dir DIR"
        print(line, file=sys.stderr)
    return EXIT_OK


def _page_images(work, docs, run_dir: Path, html_dir: Path, mode: str, dpi: int, password: str | None):
    """({(document index, page): URL}, [documents with no image source]). Files are rendered
    into RUN/review-images/ once (pages already there, e.g. from `convert --review`, are kept)."""
    import base64

    from ..review.page_images import (
        IMAGES_DIR,
        embedded_images,
        existing_page_images,
        image_url,
        write_page_images,
    )

    urls: dict[tuple[int, int], str] = {}
    missing: list[str] = []
    if mode == "none":
        return urls, missing
    root = run_dir / IMAGES_DIR
    for i, d in enumerate(docs):
        paths = existing_page_images(d.doc, d.rel, root)
        try:
            if mode == "embed" and d.source is not None:
                for n, uri in embedded_images(work, d.source.read_bytes(), d.doc, dpi, password).items():
                    urls[(i, n)] = uri
                continue
            if mode == "files" and d.source is not None and len(paths) < len(d.doc.pages):
                paths = write_page_images(work, d.source, d.doc, d.rel, root, dpi, password)
        except Exception as exc:  # noqa: BLE001 - a source we cannot render leaves its pages without images
            print(f"pagerouter: warning: {d.source}: page images not rendered: {exc}", file=sys.stderr)
        if d.source is None and len(paths) < len(d.doc.pages):
            missing.append(d.rel)
        for n, path in paths.items():
            urls[(i, n)] = ("data:image/jpeg;base64," + base64.b64encode(path.read_bytes()).decode("ascii")
                            if mode == "embed" else image_url(html_dir, path))
    return urls, missing


# ---------------------------------------------------------------------- convert --review
def add_convert_review_flag(c: argparse.ArgumentParser) -> None:
    c.add_argument("--review", action="store_true",
                   help="also render each page's image (72 DPI) into OUTDIR/review-images/ while converting and "
                   "write OUTDIR/review.html (needs -o; writes the JSON too)")


def convert_review_problem(args) -> str | None:
    """A usage problem of `convert --review`, else None; the review reads the JSON, so
    `--format md` becomes `both`."""
    if not getattr(args, "review", False):
        return None
    if args.outdir is None:
        return "--review needs -o OUTDIR"
    if args.format == "md":
        args.format = "both"
    return None


def convert_review_images(args, work, path: Path, doc) -> None:
    """Render the pages of `doc` just converted from `path`, through the converter's PageWork
    `work` (a failure is a warning: the conversion's outputs stand)."""
    from ..review.page_images import IMAGES_DIR, write_page_images

    try:
        write_page_images(work, path, doc, path.stem, args.outdir / IMAGES_DIR, password=args.password, overwrite=True)
    except Exception as exc:  # noqa: BLE001
        print(f"pagerouter: warning: {path}: page images not rendered: {exc}", file=sys.stderr)


def write_convert_review(args, cfg, work) -> None:
    from ..review.html_writer import write_review
    from ..review.run_folder import load_run

    docs = load_run(args.outdir)
    images, _ = _page_images(work, docs, args.outdir, args.outdir, "files", 72, args.password)
    html = write_review(args.outdir / "review.html", docs, page_images=images, output_cfg=cfg.output,
                        prices=cfg.bench, title=args.outdir.resolve().name)
    if not args.quiet:
        print(f"pagerouter: review: {html}", file=sys.stderr)
