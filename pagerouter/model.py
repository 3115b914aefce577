"""The document model every route writes and every client reads.

Document -> pages -> blocks. The JSON field names here are a published contract
(`pagerouter/schema/document.schema.json` is generated from these classes): top-level
`pages`; per page `number`, `status`, `route`, `triage`, `rotation`, `blocks`; per block
`text`, `role`, `bbox`, `engine`, `route`, `confidence`.

Compatibility rule: add fields, never rename or remove them. A new field has a default (older
documents still load); no field changes its meaning or type; an enumerated field (route, role,
status) gains a value only with a new SCHEMA_VERSION, since an older reader rejects values it does
not know. Clients read replies ignoring fields they do not know (clients/replies.py), so what a
newer server adds never breaks an older client; the models here stay `extra="forbid"`, so the
server, the config and the tests still catch a misspelt or stale field.

Coordinates: every bbox is (x0, y0, x1, y1) in PDF points (1/72 inch) in the page *as
displayed* (after the PDF /Rotate and after any orientation correction we applied), with the
origin at the TOP-LEFT corner and y growing downward, which is PyMuPDF's convention. Page
images (PNG/JPEG/TIFF) are treated as pages at 72 DPI unless the image states its DPI.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

SCHEMA_VERSION = "1.0"

PageRoute = Literal["text_layer", "ocr", "mixed", "blank"]
"""Where triage sends a page: read the text layer, OCR it, text layer plus OCR of its
pictures that hold text, or nothing to read."""

BlockRoute = Literal["text_layer", "ocr", "escalation", "blank"]
"""Which path produced one block: the text layer, the small reader (OCR), or the escalation
tier (large VLM, or the CPU vote)."""

PageStatus = Literal["ok", "flagged", "failed"]

Role = Literal[
    "paragraph",
    "heading",
    "list_item",
    "table",
    "caption",
    "header",
    "footer",
    "page_number",
    "footnote",
    "figure",
    "formula",
    "code",
    "reference",
    "form_field",
]

FURNITURE_ROLES: frozenset[str] = frozenset({"header", "footer", "page_number"})
"""Roles kept in the JSON but out of the Markdown body text."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Decision(_Model):
    """A decision with its evidence: never a bare bool.

    `scores` are named measurements (floats); `reasons` are human-readable sentences that say
    which measurement crossed which configured threshold.
    """

    scores: dict[str, float] = Field(default_factory=dict, description="Named measurements.")
    reasons: list[str] = Field(default_factory=list, description="Why, in words.")


class HiddenText(_Model):
    """Text in the page's text layer that the page does not show, left out of the output."""

    bbox: tuple[float, float, float, float] = Field(description="Where it sits (displayed page points, top-left origin).")
    text: str = Field(description="What the layer says there.")
    reason: str = Field(description="Why it is not visible (covered by a later shape, the colour of what is under it...).")


class TriageDecision(Decision):
    """Triage's verdict on one page."""

    route: PageRoute = Field(description="Where the page goes.")
    script: str | None = Field(
        default=None, description="Dominant script of a healthy text layer (e.g. Latin, Cyrillic, Han)."
    )
    ocr_regions: list[tuple[float, float, float, float]] = Field(
        default_factory=list,
        description="On a `mixed` page: image regions (page points) whose text the text layer does not cover.",
    )
    hidden_layer: bool = Field(
        default=False,
        description="The text layer to read is a hidden (render mode 3) OCR layer over a scan, proven to match the "
        "picture on a sample of its lines; the text-layer reader takes its invisible text.",
    )
    hidden_text: list[HiddenText] = Field(
        default_factory=list,
        description="Text-layer spans the page does not show (white on white, under a box, the colour of what is under "
        "them): never output as content; listed here with the reason so nothing disappears unsaid.",
    )


class CheckResult(_Model):
    """One named check of a reading (confidence, repetition, drift, ...)."""

    name: str = Field(description="Check name, e.g. `low_confidence`, `repetition`.")
    passed: bool = Field(description="False when the check flags the reading.")
    score: float = Field(default=0.0, description="The measured value the check compared.")
    threshold: float | None = Field(default=None, description="The configured threshold it was compared with.")
    reason: str = Field(default="", description="What was seen, in words.")
    regions: list[tuple[float, float, float, float]] = Field(
        default_factory=list,
        description="Where on the page the check saw the problem (displayed page points), e.g. text-like ink that no "
        "output block accounts for.",
    )


class FormField(_Model):
    """One interactive form field (AcroForm widget) whose value a `form_field` block shows."""

    name: str = Field(description="The field's fully qualified name in the PDF's form (/T, parents joined by '.').")
    type: str = Field(description="Widget type as PyMuPDF names it: Text, CheckBox, RadioButton, ComboBox, ListBox.")
    value: str = Field(
        description="The value the file holds (/V): text as typed (line breaks kept), a box's on-state name or "
        "`Off`, the chosen option(s). The block's text writes a ticked box `[x]`, an empty one `[ ]`."
    )
    bbox: tuple[float, float, float, float] = Field(description="The widget's box (displayed page points, top-left origin).")


class Block(_Model):
    """One piece of page content with full provenance."""

    text: str = Field(description="The text as read, raw: the Markdown writer escapes it (pagerouter.render.escape; "
                      "`unescape` reverses it). A table block holds a light GFM table of its cells.")
    role: Role = Field(description="What the block is on the page.")
    bbox: tuple[float, float, float, float] = Field(
        description="(x0, y0, x1, y1) in PDF points, origin top-left of the displayed page, y down."
    )
    page: int = Field(description="1-based page number this block is on.")
    engine: str = Field(description="Engine that produced the text, e.g. `pymupdf`, `rapidocr`, `vote`.")
    engine_version: str = Field(default="", description="Version of that engine.")
    route: BlockRoute = Field(description="Path that produced the block.")
    confidence: float = Field(ge=0.0, le=1.0, description="0..1; 1.0 for a trusted text layer.")
    order: int = Field(default=0, description="Position in the page's reading order (0-based).")
    level: int | None = Field(default=None, description="Heading level (1 = top) for headings.")
    cells: list[list[str]] | None = Field(default=None, description="Table cells, row-major, for tables.")
    spans: list[tuple[int, int, int, int]] | None = Field(
        default=None,
        description="For tables: cells covering more than one grid position, as (row, col, rowspan, colspan) of the "
        "top-left position (0-based, in `cells`). `cells` repeats a spanning cell's text in every position it covers "
        "(the Markdown's GFM table does too; its HTML table writes one cell with `colspan`/`rowspan`).",
    )
    image: str | None = Field(default=None, description="Saved image file for figures (with --images).")
    image_png_base64: str | None = Field(
        default=None,
        description="For figures, when the request asked for `images`: the figure's crop as a base64 PNG "
        "(text-layer pages rendered at 150 DPI, OCR pages cut from the OCR render).",
    )
    witnesses: list[str] = Field(
        default_factory=list, description="Engines whose readings were voted on (engine `vote`)."
    )
    fields: list[FormField] | None = Field(
        default=None,
        description="For `form_field` blocks (a label with its value on one line): the AcroForm fields whose values "
        "the text shows, with their names; absent for a printed label/value pair.",
    )
    furniture: Decision | None = Field(
        default=None,
        description="For header/footer/page_number blocks: the furniture score (`scores['furniture']`, compared "
        "with `textlayer.furniture_min_score`) and the cues behind it (position, gap, size, content, repetition).",
    )


class Attempt(_Model):
    """One try of a VLM tier at a page or region (the retry ladder records every one)."""

    tier: str = Field(description="Which tier tried: `small_reader` or `escalation`.")
    engine: str = Field(description="Engine and model that generated, e.g. `vllm 0.32.0 / olmOCR-2-7B`.")
    number: int = Field(description="1-based attempt number on this page (or region).")
    region: int | None = Field(default=None, description="Layout region index for a per-region tier; null for a page.")
    temperature: float = Field(description="Sampling temperature of this attempt.")
    rotation: int = Field(default=0, description="Clockwise degrees the image was rotated for this attempt.")
    finish_reason: str = Field(description="Why generation ended: stop, length (hit max tokens), error, abort.")
    prompt_tokens: int = Field(default=0, description="Tokens in the prompt (text and image).")
    completion_tokens: int = Field(default=0, description="Tokens generated.")
    seconds: float = Field(default=0.0, description="Wall time of the attempt.")
    accepted: bool = Field(description="True for the attempt whose output was used.")
    rejected_because: list[str] = Field(
        default_factory=list, description="Checks this output failed, e.g. `vlm_truncated: hit max_tokens 4096`."
    )


class Page(_Model):
    number: int = Field(description="1-based page number in the source.")
    status: PageStatus = Field(description="ok, flagged (needs a look or a better reader) or failed.")
    route: PageRoute | None = Field(description="Triage route; null only when the page failed before triage.")
    triage: TriageDecision | None = Field(default=None, description="Triage decision with scores and reasons.")
    rotation: int = Field(
        default=0, description="Clockwise degrees (0/90/180/270) we rotated the page image to read it upright."
    )
    width: float = Field(default=0.0, description="Page width in points (as displayed).")
    height: float = Field(default=0.0, description="Page height in points (as displayed).")
    blocks: list[Block] = Field(default_factory=list, description="Blocks in reading order.")
    checks: list[CheckResult] = Field(default_factory=list, description="Checks run on the reading.")
    flags: list[str] = Field(default_factory=list, description="Short reasons the page is flagged.")
    error: str | None = Field(default=None, description="For failed pages: what went wrong.")
    timings: dict[str, float] = Field(default_factory=dict, description="Seconds spent per stage.")
    language: str | None = Field(default=None, description="Detected script/language of the page.")
    attempts: list[Attempt] = Field(
        default_factory=list, description="Every VLM attempt at this page, accepted or rejected, in order."
    )


class Document(_Model):
    schema_version: str = Field(default=SCHEMA_VERSION, description="Version of this JSON layout.")
    source: str = Field(description="Input file name (or `-` for a raw upload).")
    page_count: int = Field(description="Pages in the source document.")
    pages: list[Page] = Field(default_factory=list, description="Converted pages in page order.")
    coordinate_origin: Literal["top-left"] = Field(
        default="top-left", description="Bboxes are in PDF points, origin top-left, y down."
    )
    engines: dict[str, str] = Field(default_factory=dict, description="Engine name -> version used.")

    def route_summary(self) -> dict[str, dict[str, float]]:
        """Pages and seconds per route (failed pages count under `failed`)."""
        out: dict[str, dict[str, float]] = {}
        for p in self.pages:
            key = "failed" if p.status == "failed" else (p.route or "failed")
            row = out.setdefault(key, {"pages": 0, "seconds": 0.0, "flagged": 0})
            row["pages"] += 1
            row["seconds"] += sum(p.timings.values())
            row["flagged"] += p.status == "flagged"
        return out

    # The renderers live in pagerouter/render/, which imports this module: the two export methods
    # reach them at call time through the package's public API (`pagerouter.to_markdown`,
    # `pagerouter.to_json`, imported lazily there), so the data model keeps importing nothing of ours.
    def to_markdown(self, output: Any = None, images_rel_to: str | os.PathLike[str] | None = None) -> str:
        """This document as Markdown, as `pagerouter convert` writes it. `output`: an
        `OutputConfig` (page markers, separator; default: the defaults); `images_rel_to`: the
        folder figure links are written relative to."""
        import pagerouter

        rel = None if images_rel_to is None else Path(images_rel_to)
        return pagerouter.to_markdown(self, output, images_rel_to=rel)

    def to_json(self, indent: int | None = 2) -> str:
        """This document as the published JSON (`pagerouter/schema/document.schema.json`)."""
        import pagerouter

        return pagerouter.to_json(self, indent=indent)
