"""Renderers: Document -> Markdown, Document -> JSON, and the published JSON schema."""

from __future__ import annotations

import json
import os
from pathlib import Path

from .config.output import OutputConfig
from .model import FURNITURE_ROLES, Block, Document, Page

SCHEMA_PATH = Path(__file__).parent / "schema" / "document.schema.json"

FALLBACK_FLAGS = ("vlm_ladder_exhausted", "vlm_regions", "escalation_timeout", "escalation_error")
"""Flags of a page whose text is a reading that failed its checks, kept so the page is not lost:
its Markdown says so in an HTML comment, so a reader of the Markdown alone can tell."""


def block_markdown(b: Block, images_rel_to: Path | None = None) -> str:
    text = b.text.strip()
    if b.role == "heading":
        level = min(max(b.level or 2, 1), 6)
        return f"{'#' * level} {' '.join(text.split())}" if text else ""
    if b.role == "list_item":
        if not text:
            return ""
        # Numbered items keep their own number ("3."); bullets were stripped by the reader.
        first = text.split(maxsplit=1)[0]
        numbered = first[:-1].isalnum() and first[-1] in ".)" if len(first) > 1 else False
        return text if numbered else f"- {text}"
    if b.role == "figure":
        if b.image:
            ref = os.path.relpath(b.image, images_rel_to) if images_rel_to else b.image
            return f"![{text or 'figure'}]({ref})"
        return f"<!-- figure p{b.page} bbox={_fmt_bbox(b.bbox)} -->"
    if b.role == "formula" and text and not text.startswith("$"):
        return f"$$\n{text}\n$$"
    if b.role == "code" and text:
        return f"```\n{text}\n```"
    if b.role in ("caption", "footnote", "reference"):
        return text
    return text


def _fmt_bbox(bbox: tuple[float, float, float, float]) -> str:
    return ",".join(f"{v:.0f}" for v in bbox)


def page_markdown(page: Page, cfg: OutputConfig, images_rel_to: Path | None = None) -> str:
    parts: list[str] = []
    if cfg.page_markers:
        parts.append(f"<!-- page {page.number} status={page.status} route={page.route} -->")
    if page.status == "failed":
        parts.append(f"<!-- page {page.number} failed: {page.error} -->")
    elif "needs_ocr" in page.flags:
        parts.append(f"<!-- page {page.number} needs_ocr: not read -->")
    elif any(f in page.flags for f in FALLBACK_FLAGS):
        flags = ", ".join(page.flags).replace("--", "- -")
        parts.append(f"<!-- page {page.number} flagged {flags}: the text below is a reading that failed its "
                     "checks, kept so the page is not lost -->")
    for b in sorted(page.blocks, key=lambda b: b.order):
        if b.role in FURNITURE_ROLES and not cfg.include_furniture:
            continue
        md = block_markdown(b, images_rel_to)
        if md:
            parts.append(md)
    return "\n\n".join(parts)


def to_markdown(doc: Document, cfg: OutputConfig | None = None, images_rel_to: Path | None = None) -> str:
    cfg = cfg or OutputConfig()
    pages = [page_markdown(p, cfg, images_rel_to) for p in doc.pages]
    sep = cfg.page_separator if not cfg.page_markers else "\n\n"
    return sep.join(pages).strip() + "\n"


def to_json(doc: Document, indent: int | None = 2) -> str:
    return doc.model_dump_json(indent=indent)


def document_schema() -> dict:
    schema = Document.model_json_schema()
    schema["$id"] = "https://pagerouter.invalid/schema/document.schema.json"
    schema["title"] = "pagerouter document"
    return schema


def write_schema(path: Path = SCHEMA_PATH) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document_schema(), indent=2) + "\n", encoding="utf-8")
    return path


ROUTE_ORDER = ["text_layer", "mixed", "ocr", "blank", "failed"]


def add_route_rows(rows: dict[str, dict[str, float]], more: dict[str, dict]) -> None:
    """Add per-route figures (pages, flagged, seconds) of one document or record into `rows`."""
    for route, r in more.items():
        acc = rows.setdefault(route, {"pages": 0, "flagged": 0, "seconds": 0.0})
        for k in acc:
            acc[k] += r.get(k, 0)


def route_order(route: str) -> int:
    return ROUTE_ORDER.index(route) if route in ROUTE_ORDER else len(ROUTE_ORDER)


def route_summary_table(docs: list[Document], wall_s: float | None = None) -> str:
    """The table `convert` prints: pages, flagged and seconds per route, over all inputs, and
    the run's wall time when given."""
    rows: dict[str, dict[str, float]] = {}
    for d in docs:
        add_route_rows(rows, d.route_summary())
    return route_table(rows, wall_s)


def route_table(rows: dict[str, dict[str, float]], wall_s: float | None = None) -> str:
    """Pages, flagged, seconds and seconds a page per route, then the totals (`convert`, `batch`).
    A page's seconds are the sum of its stages (one key each); pages that ran at the same time
    overlap, so with `wall_s` a last line says the run's wall time and whether they did."""
    keys = sorted(rows, key=route_order)
    lines = [f"{'route':<12}{'pages':>7}{'flagged':>9}{'seconds':>10}{'s/page':>9}"]
    tot = {"pages": 0, "flagged": 0, "seconds": 0.0}
    for k in keys:
        r = rows[k]
        per = r["seconds"] / r["pages"] if r["pages"] else 0.0
        lines.append(f"{k:<12}{int(r['pages']):>7}{int(r['flagged']):>9}{r['seconds']:>10.2f}{per:>9.3f}")
        for f in tot:
            tot[f] += r[f]
    lines.append(f"{'total':<12}{int(tot['pages']):>7}{int(tot['flagged']):>9}{tot['seconds']:>10.2f}")
    if wall_s is not None:
        note = "  (pages ran concurrently: their seconds overlap)" if tot["seconds"] > wall_s else ""
        lines.append(f"{'wall':<12}{'':>16}{wall_s:>10.2f}{note}")
    return "\n".join(lines)
