"""Model profiles: what a VLM is asked, at what image size, and how its answer is parsed.

- `paddleocr_vl` (region profile, PaddleOCR-VL's style): one layout region per prompt; the
  region's kind picks the task ("OCR:", "Table Recognition:", "Formula Recognition:"); the
  answer is plain text, a table (HTML, Markdown or OTSL cell tokens) or LaTeX.
- `lightonocr` (page profile, LightOnOCR-2's style): the whole page at 1540 px longest side
  as the only input -- no text prompt (the model repeats a prompt back), no anchor -- and plain
  Markdown back, no front matter: no rotation or language from the model (the layout stage's
  orientation trial has already turned the page upright).
- `olmocr` (page profile, olmOCR's style): the whole page at 1288 px longest side; the answer
  is YAML front matter (primary_language, is_rotation_valid, rotation_correction, is_table,
  is_diagram) then the page as Markdown, tables as HTML or Markdown, equations as LaTeX.
  Optionally the page's trusted text-layer blocks go in the prompt with their coordinates as
  an anchor.

A parser raises `ProfileParseError` (with the reason) on an answer it cannot use; the ladder
records that as a rejected attempt.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import yaml

from ..model import Block
from ..render.table_markdown import cells_to_markdown


class ProfileParseError(ValueError):
    """The model's answer does not have the shape the profile asked for."""


# -- region profile (PaddleOCR-VL style) -------------------------------------------------------

REGION_TASKS = {
    "text": "OCR:",
    "table": "Table Recognition:",
    "formula": "Formula Recognition:",
}
"""Task prompt per region task (PaddleOCR-VL is prompted with the task name alone)."""

TASK_OF_REGION = {
    "text": "text", "title": "text", "figure_caption": "text", "table_caption": "text", "header": "text",
    "footer": "text", "reference": "text", "table": "table", "equation": "formula",
}
"""Layout region kind -> task; kinds not listed (figures) are not sent to the model."""


@dataclass
class RegionOutput:
    text: str
    cells: list[list[str]] | None = None  # tables only


def region_prompt(task: str) -> str:
    return REGION_TASKS[task]


def parse_region(task: str, raw: str) -> RegionOutput:
    """Parse a region answer: text as is (trimmed), a table into cells, a formula into LaTeX."""
    text = raw.strip()
    if task == "table":
        cells = parse_table(text)
        if not cells:
            raise ProfileParseError("table answer holds no table (no HTML rows, Markdown rows or OTSL cells)")
        return RegionOutput(text=cells_to_markdown(cells), cells=cells)
    if task == "formula":
        latex = strip_math_delimiters(text)
        if not latex:
            raise ProfileParseError("formula answer is empty")
        return RegionOutput(text=f"$$\n{latex}\n$$")
    return RegionOutput(text=text)


# -- tables -------------------------------------------------------------------------------------

_OTSL_CELL = re.compile(r"<(fcel|ecel|lcel|ucel|xcel|nl)>")


def parse_table(text: str) -> list[list[str]]:
    """Cells of a table answer in any of the forms VLMs emit: HTML, Markdown pipes, OTSL tokens."""
    from ..ocr.tables import html_to_cells

    if "<td" in text or "<th" in text:
        return html_to_cells(text)
    if _OTSL_CELL.search(text):
        return _otsl_cells(text)
    rows = []
    for line in text.splitlines():
        s = line.strip()
        if not (s.startswith("|") or s.count("|") >= 2):
            continue
        cells = [c.strip() for c in s.strip("|").split("|")]
        if all(re.fullmatch(r":?-+:?", c) for c in cells if c):  # the header separator row
            continue
        rows.append(cells)
    width = max((len(r) for r in rows), default=0)
    return [r + [""] * (width - len(r)) for r in rows] if width >= 2 or len(rows) >= 2 else []


def _otsl_cells(text: str) -> list[list[str]]:
    """OTSL (PaddleOCR-VL/Docling table tokens): <fcel>text = a cell, <ecel> = empty cell,
    <lcel>/<ucel>/<xcel> = spans merged left/up/both (kept as empty cells), <nl> = row end."""
    rows: list[list[str]] = [[]]
    parts = _OTSL_CELL.split(text)
    i = 1
    while i < len(parts):
        tag, content = parts[i], parts[i + 1] if i + 1 < len(parts) else ""
        if tag == "nl":
            rows.append([])
        elif tag == "fcel":
            rows[-1].append(" ".join(content.split()))
        else:
            rows[-1].append("")
        i += 2
    rows = [r for r in rows if r]
    width = max((len(r) for r in rows), default=0)
    return [r + [""] * (width - len(r)) for r in rows]


def strip_math_delimiters(text: str) -> str:
    s = text.strip()
    for a, b in (("$$", "$$"), ("\\[", "\\]"), ("\\(", "\\)"), ("$", "$")):
        if s.startswith(a) and s.endswith(b) and len(s) >= len(a) + len(b):
            return s[len(a): len(s) - len(b)].strip()
    return s


# -- page profile (olmOCR style) ----------------------------------------------------------------

PAGE_PROMPT = (
    "Attached is one page of a document. Return the plain text of this page as if you were reading it "
    "naturally, as Markdown: headings with #, tables as HTML or Markdown tables, equations as LaTeX, "
    "figures as ![description](figure). Leave out nothing that is on the page and add nothing that is not.\n"
    "Start with a YAML front matter block between --- lines giving primary_language (ISO code or null), "
    "is_rotation_valid (true if the page is upright), rotation_correction (clockwise degrees 0, 90, 180 or 270 "
    "that would make it upright), is_table and is_diagram (true/false)."
)

ANCHOR_INTRO = (
    "\nBelow is text that was extracted from the page's embedded text layer, each piece with its "
    "[x, y] position in points from the top-left corner. Use it where it matches the image:\n"
    "RAW_TEXT_START\n{anchor}\nRAW_TEXT_END"
)

FRONT_KEYS = ("primary_language", "is_rotation_valid", "rotation_correction", "is_table", "is_diagram")


@dataclass
class PageOutput:
    primary_language: str | None
    is_rotation_valid: bool
    rotation_correction: int
    is_table: bool
    is_diagram: bool
    body: str
    extra: dict = field(default_factory=dict)


def page_prompt(anchor_blocks: list[Block] | None = None, max_chars: int = 6000, template: str | None = None) -> str:
    """The page prompt, with the trusted text-layer blocks as an anchor when given; `template`
    (a configured prompt) replaces the built-in one, its `{anchor}` taking the anchor text."""
    lines, used = [], 0
    for b in anchor_blocks or []:
        piece = f"[{b.bbox[0]:.0f}x{b.bbox[1]:.0f}]{' '.join(b.text.split())}"
        if used + len(piece) > max_chars:
            break
        lines.append(piece)
        used += len(piece) + 1
    anchor = "\n".join(lines)
    if template is not None:
        return template.replace("{anchor}", anchor)
    return PAGE_PROMPT + ANCHOR_INTRO.format(anchor=anchor) if lines else PAGE_PROMPT


_FRONT = re.compile(r"\A\s*(?:```(?:yaml)?\s*)?---[ \t]*\n(.*?)\n---[ \t]*(?:\n```[ \t]*)?(?:\n|\Z)", re.S)


def parse_page(raw: str) -> PageOutput:
    """Split an olmOCR-style answer into front matter and Markdown body."""
    raw = raw.replace("\r\n", "\n")
    m = _FRONT.match(raw)
    if not m:
        raise ProfileParseError("answer does not start with a YAML front matter block (--- ... ---)")
    try:
        front = yaml.safe_load(m.group(1)) or {}
    except yaml.YAMLError as exc:
        raise ProfileParseError(f"front matter is not valid YAML: {str(exc)[:120]}") from None
    if not isinstance(front, dict):
        raise ProfileParseError("front matter is not a mapping")
    missing = [k for k in ("is_rotation_valid", "rotation_correction") if k not in front]
    if missing:
        raise ProfileParseError(f"front matter lacks {', '.join(missing)}")
    try:
        rot = int(front.get("rotation_correction") or 0)
    except (TypeError, ValueError):
        raise ProfileParseError(f"rotation_correction {front.get('rotation_correction')!r} is not a number") from None
    if rot not in (0, 90, 180, 270):
        raise ProfileParseError(f"rotation_correction {rot} is not 0, 90, 180 or 270")
    lang = front.get("primary_language")
    return PageOutput(
        primary_language=str(lang) if lang not in (None, "", "null") else None,
        is_rotation_valid=_truthy(front.get("is_rotation_valid"), default=True),
        rotation_correction=rot,
        is_table=_truthy(front.get("is_table")),
        is_diagram=_truthy(front.get("is_diagram")),
        body=raw[m.end():].strip(),
        extra={k: v for k, v in front.items() if k not in FRONT_KEYS},
    )


def parse_plain_page(raw: str) -> PageOutput:
    """A LightOnOCR-style answer: the page as Markdown, nothing else (upright, language unknown)."""
    body = raw.replace("\r\n", "\n").strip()
    return PageOutput(primary_language=None, is_rotation_valid=True, rotation_correction=0,
                      is_table=body.lstrip().lower().startswith(("<table", "|")), is_diagram=False, body=body)


def _truthy(v, default: bool = False) -> bool:
    if v is None:
        return default
    if isinstance(v, bool):
        return v
    return str(v).strip().lower() in ("true", "yes", "1")
