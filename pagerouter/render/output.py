"""Renderers: Document -> Markdown, Document -> JSON, and the published JSON schema; output hygiene."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ..config.output import OutputConfig
from ..model import FURNITURE_ROLES, Block, Document, Page
from .escape import (
    escape_alt,
    escape_heading,
    escape_html,
    escape_inline,
    escape_math,
    escape_text,
    fence,
)
from .table_markdown import cells_to_markdown

SCHEMA_PATH = Path(__file__).parents[1] / "schema" / "document.schema.json"

FALLBACK_FLAGS = ("vlm_ladder_exhausted", "vlm_regions", "escalation_timeout", "escalation_error")
"""Flags of a page whose text is a reading that failed its checks, kept so the page is not lost:
its Markdown says so in an HTML comment, so a reader of the Markdown alone can tell."""


def is_markdown_source(b: Block) -> bool:
    """Whether the block's text is Markdown by design: a VLM's page answer (`vlm/markdown_blocks`:
    route `escalation`, no voting witnesses). Every other block holds page text as read."""
    return b.route == "escalation" and not b.witnesses


_VLM_LIST = re.compile(r"(?:[-*+]|\d{1,9}[.)])(?=[ \t]|$)")


def block_markdown(b: Block, images_rel_to: Path | None = None) -> str:
    """One block as Markdown. Page text is untrusted: it is escaped (`render.escape`) so that only
    the structure written here (heading `#`s, list markers, tables, fences) is live; a VLM
    block keeps its own inline Markdown and loses only its HTML. The JSON keeps the raw text."""
    text = b.text.strip()
    md_src = is_markdown_source(b)
    plain = escape_html if md_src else escape_text
    if b.role == "heading":
        level = min(max(b.level or 2, 1), 6)
        if not text:
            return ""
        return f"{'#' * level} {escape_html(' '.join(text.split())) if md_src else escape_heading(text)}"
    if b.role == "list_item":
        if not text:
            return ""
        if md_src:  # the model wrote its own marker (`- `, `1. `) or none
            return escape_html(text) if _VLM_LIST.match(text) else f"- {escape_html(text)}"
        # Numbered items keep their own number ("3."); bullets were stripped by the reader.
        first = text.split(maxsplit=1)[0]
        numbered = first[:-1].isalnum() and first[-1] in ".)" if len(first) > 1 else False
        return escape_text(text, keep_marker=True) if numbered else f"- {escape_text(text)}"
    if b.role == "figure":
        alt = escape_alt(text) or "figure"
        if b.image:
            ref = os.path.relpath(b.image, images_rel_to) if images_rel_to else b.image
            ref = f"<{ref}>" if re.search(r"[\s()<>]", ref) else ref
            return f"![{alt}]({ref})"
        return f"<!-- figure p{b.page} bbox={_fmt_bbox(b.bbox)} -->"
    if b.role == "formula" and text:
        return f"$$\n{escape_math(_strip_dollars(text))}\n$$"
    if b.role == "code" and text:
        return fence(text)
    if b.role == "table" and text:
        if b.cells and not text.startswith("<"):  # our GFM table: rewritten with each cell escaped
            return cells_to_markdown(b.cells, escape=_vlm_cell if md_src else escape_inline)
        if b.cells:  # our HTML table (several header rows): its cells are entity-escaped already
            return escape_html(text)
        return plain(text)  # no grid: the rows as text (OCR), or a model's table we could not split
    return plain(text)


def _vlm_cell(s: str) -> str:
    return escape_html(s).replace("|", "\\|")


def _strip_dollars(text: str) -> str:
    """Formula text without the `$$ ... $$` / `$ ... $` / `\\[ ... \\]` a reader or model put around it."""
    for a, z in (("$$", "$$"), ("\\[", "\\]"), ("$", "$")):
        if text.startswith(a) and text.endswith(z) and len(text) >= len(a) + len(z):
            return text[len(a): len(text) - len(z)].strip()
    return text


def _comment(text: str) -> str:
    """Text safe inside an HTML comment: no `--` (which could close it)."""
    while "--" in text:
        text = text.replace("--", "- -")
    return text


def _fmt_bbox(bbox: tuple[float, float, float, float]) -> str:
    return ",".join(f"{v:.0f}" for v in bbox)


def page_markdown(page: Page, cfg: OutputConfig, images_rel_to: Path | None = None) -> str:
    parts: list[str] = []
    if cfg.page_markers:
        parts.append(f"<!-- page {page.number} status={page.status} route={page.route} -->")
    if page.status == "failed":
        parts.append(f"<!-- page {page.number} failed: {_comment(page.error or '')} -->")
    elif "needs_ocr" in page.flags:
        parts.append(f"<!-- page {page.number} needs_ocr: not read -->")
    elif any(f in page.flags for f in FALLBACK_FLAGS):
        flags = _comment(", ".join(page.flags))
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


# --- output hygiene ----------------------------------------------------------------------
# Output hygiene, in one place for every route: no control characters in any text a page or
# document carries out (text layer, OCR, VLM alike).
#
# A VLM's rejected reading kept as a fallback, a damaged text layer or an OCR engine can put
# C0/C1 control characters (`\\x14`, `\\x07`, ...) into block text, table cells, check reasons that
# quote an output, or a file name; they break Markdown viewers and JSON consumers that expect
# text. So every page leaving `pipeline.convert_pages` and every new document goes through
# `clean_model`: every string field, nested ones included, loses its control characters except
# newline and tab (a carriage return becomes a newline), lone surrogates (not encodable as UTF-8)
# are dropped, and a run of U+FFFD replacement characters (undecodable bytes) becomes one.
_BAD = re.compile(r"\r\n?|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]|\ufffd{2,}")


def _fix(m: re.Match) -> str:
    s = m.group()
    if s[0] == "\r":
        return "\n"
    if s[0] == "\ufffd":
        return "\ufffd"
    return ""


def clean_text(s: str) -> str:
    """`s` without control characters other than newline and tab (see the module doc)."""
    return _BAD.sub(_fix, s) if _BAD.search(s) else s


def has_control_chars(s: str) -> bool:
    """Whether `s` holds a character `clean_text` would remove (tests and checks use this)."""
    return any(c not in "\n\t" and (ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F) for c in s)


def _clean_value(v: Any) -> Any:
    if isinstance(v, str):
        return clean_text(v)
    if isinstance(v, BaseModel):
        clean_model(v)
        return v
    if isinstance(v, list):
        out = [_clean_value(x) for x in v]
        return v if all(a is b for a, b in zip(out, v)) else out
    if isinstance(v, tuple):
        out_t = tuple(_clean_value(x) for x in v)
        return v if all(a is b for a, b in zip(out_t, v)) else out_t
    if isinstance(v, dict):
        out_d, changed = {}, False
        for k, x in v.items():
            k2, x2 = _clean_value(k), _clean_value(x)
            changed = changed or k2 is not k or x2 is not x
            out_d[k2] = x2
        return out_d if changed else v
    return v


def clean_model(m: BaseModel) -> BaseModel:
    """Clean every string field of `m` and its nested models, lists and dicts, in place."""
    for name in type(m).model_fields:
        v = getattr(m, name)
        new = _clean_value(v)
        if new is not v:
            object.__setattr__(m, name, new)  # a cleaned copy of a field pydantic already validated
    return m
