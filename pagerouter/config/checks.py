from typing import Literal

from pydantic import Field

from .base import StrictModel
from .vlm import VlmTierConfig


class ChecksConfig(StrictModel):
    """Thresholds of the checks that flag a reading (owned by pagerouter.ocr.checks).

    Every check returns a CheckResult with the measured score and the threshold below; a
    failed check flags the page for escalation. Checks that need a minimum amount of text to
    mean anything (drift, language) pass with a reason when the text is shorter.
    """

    # -- confidence -------------------------------------------------------------------------
    min_mean_confidence: float = Field(
        default=0.80, description="Flag a reading whose character-weighted mean line confidence is below this."
    )
    # -- empty / blank ----------------------------------------------------------------------
    min_ink_for_text: float = Field(
        default=0.002,
        description="Ink share (non-background share of a low-res render) above which a page is expected to hold text.",
    )
    min_chars_on_inked_page: int = Field(
        default=8, description="Fewer letters/digits than this on a page with ink is `near-empty` output."
    )
    blank_max_ink: float = Field(
        default=0.0003, description="Ink share at or below which the page counts as blank (expected output: none)."
    )
    blank_max_chars: int = Field(
        default=3, description="More letters/digits than this on a blank page is hallucinated text."
    )
    # -- ink accounting: what the page shows against what was read ----------------------------
    unread_ink: bool = Field(
        default=True,
        description="Look for rows of letter-like ink on the page render that no output block covers (the "
        "reading left text out, or read nothing where letters are): the page fails `unread_ink` with the boxes.",
    )
    unread_ink_dpi: float = Field(default=144.0, gt=0, description="DPI the page render is looked at for rows of letters.")
    unread_ink_min_letter_pt: float = Field(
        default=3.0, gt=0, description="Smallest letter height (points) counted in a row of letter-like ink."
    )
    unread_ink_max_letter_pt: float = Field(
        default=40.0, gt=0, description="Largest letter height (points) counted in a row of letter-like ink."
    )
    unread_ink_min_blobs: int = Field(
        default=5, ge=2, description="Letter-like blobs chained in one row for the row to count as a line of text."
    )
    unread_ink_edge_margin_pt: float = Field(
        default=10.0, ge=0, description="Rows reaching into this outer margin (scanner shadows, punched edges) are ignored."
    )
    unread_ink_max_lines: int = Field(
        default=0, ge=0, description="Uncovered rows of letters allowed outside figures (0: every one is text left unread)."
    )
    unread_ink_figure_lines: int = Field(
        default=3, ge=1,
        description="A figure region counts as unread text only when it holds at least this many uncovered rows of "
        "letters (a chart's axis labels are one or two; a picture of a paragraph is more).",
    )
    unread_ink_min_cover: float = Field(
        default=0.5, ge=0, le=1, description="A row of letters is covered when this share of its box lies in output blocks."
    )
    # -- repetition loops -------------------------------------------------------------------
    max_char_run: int = Field(
        default=30, description="Flag a letter/digit repeated more than this many times in a row (`aaaaaaaa...`)."
    )
    char_run_ignore: str = Field(
        default=".-_=*~·•… \t\n|", description="Characters whose long runs are normal layout (leaders, rules)."
    )
    max_token_repeats: int = Field(
        default=8,
        description="Flag one token (with 2+ letters/digits, or a CJK character) repeated back to back more than this many times.",
    )
    max_phrase_repeats: int = Field(
        default=3,
        description="Flag a phrase of 2..max_phrase_tokens tokens repeated back to back more than this many times...",
    )
    min_loop_tokens: int = Field(
        default=30, description="...when the repeats cover at least this many tokens (short label pairs in schematics repeat)."
    )
    max_phrase_tokens: int = Field(default=16, description="Longest phrase (in tokens) looked for as a tandem repeat.")
    max_line_repeats: int = Field(
        default=6, description="Flag one text line occurring more than this many times anywhere in the text..."
    )
    min_repeated_line_share: float = Field(
        default=0.3,
        description="...when its copies hold at least this share of the text's letters/digits (table cells repeat too).",
    )
    min_line_chars_for_repeat: int = Field(
        default=12, description="Lines with fewer letters/digits than this are not counted for line repetition."
    )
    # -- low-variety drift ------------------------------------------------------------------
    min_tokens_for_drift: int = Field(
        default=60, description="Drift checks (3-gram rate, compressibility) need at least this many tokens."
    )
    min_unique_trigram_rate: float = Field(
        default=0.3, description="Flag text whose distinct token 3-grams / all 3-grams is below this."
    )
    min_compression_ratio: float = Field(
        default=0.12,
        description="Flag text whose zlib-compressed size / raw size is below this (highly repetitive text).",
    )
    max_chars_per_ink: float = Field(
        default=120_000.0,
        description="Letters/digits a page can hold per unit of ink share; more than this (plus slack) is too long.",
    )
    length_slack_chars: int = Field(
        default=400, description="Letters/digits always allowed on top of the ink-based length limit."
    )
    # -- language plausibility --------------------------------------------------------------
    min_chars_for_language: int = Field(
        default=40, description="Language plausibility checks need at least this many letters/digits."
    )
    min_expected_script_share: float = Field(
        default=0.5,
        description="With a known page script: flag when fewer letters than this share are in that script (or its companions).",
    )
    max_foreign_script_share: float = Field(
        default=0.01,
        description="Flag letters of an unrelated script (e.g. CJK in a Latin page) above this share of all letters.",
    )
    min_foreign_script_chars: int = Field(
        default=2, description="...and at least this many such letters (one stray glyph is not a pattern)."
    )
    min_wordlike_share: float = Field(
        default=0.65,
        description="Flag text where fewer tokens than this share look like words or numbers (single-script letters, digits).",
    )
    max_symbol_share: float = Field(
        default=0.12,
        description="Flag text where more than this share of non-space characters are unusual symbols (not letters, digits, common punctuation).",
    )
    # -- tables -----------------------------------------------------------------------------
    max_table_row_mismatch: float = Field(
        default=0.25,
        description="Flag a table whose share of rows with a cell count different from the most common one exceeds this.",
    )
    # -- per block --------------------------------------------------------------------------
    min_block_chars: int = Field(
        default=80, description="Blocks with at least this many non-space characters are also checked on their own."
    )
    max_block_results: int = Field(default=8, description="At most this many failing per-block results are reported.")


class EscalationConfig(StrictModel):
    """Which engines re-read flagged pages on a CPU-only install, and how they vote.

    Tesseract's render size is `ocr.render_targets.tesseract` (300 DPI, pixel-capped) and its
    language packs per script are `ocr.scripts.table.*.tesseract_langs` (owned by the OCR config).
    """

    enabled: bool = Field(default=True, description="Re-read flagged pages; if false they stay flagged as read.")
    kind: Literal["vote", "vlm"] = Field(
        default="vote",
        description="Escalation engine: `vote` = independent CPU engines (RapidOCR hi-res, Tesseract) vote token by "
        "token; `vlm` = a large page VLM (olmOCR-class under vLLM, see `vlm`) with a retry ladder.",
    )
    vlm: VlmTierConfig = Field(
        default_factory=VlmTierConfig, description="The large page VLM tier (used when kind is `vlm`)."
    )
    vlm_agreement_min: float = Field(
        default=0.8, ge=0, le=1,
        description="When the large VLM's reading and a first reading that passed its own checks agree on less than "
        "this share of tokens, a third engine (the CPU vote) is read as witness and the token vote decides.",
    )
    engine_order: list[str] = Field(
        default_factory=lambda: ["rapidocr_hires", "tesseract", "rapidocr"],
        description="Witness order: the first usable witness is the alignment pivot and wins ties. "
        "`rapidocr` is the slot of the first (flagged) reading, whatever engine produced it (Tesseract on scripts "
        "RapidOCR's model cannot read); `rapidocr_hires` a RapidOCR re-read at higher resolution. Witnesses are "
        "counted by engine: RapidOCR hi-res and the first RapidOCR reading are one engine (same model), so only "
        "the first usable of them votes; a slot whose engine produced the first reading is not re-run. A page "
        "left with one usable independent engine is flagged `escalation_single_witness`.",
    )
    use_tesseract: bool = Field(default=True, description="Use Tesseract as a witness when it is installed.")
    use_rapidocr_hires: bool = Field(
        default=True,
        description="Re-read with RapidOCR at `hires_longest_side_px` (same engine as a RapidOCR first reading: it "
        "replaces that reading in the vote when it comes first in `engine_order`, it never adds a second vote).",
    )
    hires_longest_side_px: int = Field(
        default=2600, description="Longest side of the high-resolution RapidOCR re-read, in pixels."
    )
    hires_max_pixels: int = Field(default=9_000_000, description="Pixel cap of the high-resolution re-read.")
    tesseract_cmd: str | None = Field(default=None, description="Path of the tesseract binary (default: on PATH).")
    tesseract_max_side_px: int = Field(
        default=8000,
        description="Longest tile side sent to Tesseract (it refuses images over 32767 px); taller renders are cut into strips.",
    )
    tesseract_median_filter: int = Field(
        default=3,
        description="Median filter size (odd px; 0 = off) applied before Tesseract: its binarisation turns scan "
        "noise into speckles it then reads as text (measured: CER 0.99 -> 0.0, 16 s -> 1.6 s on a noisy scan).",
    )
    tesseract_timeout_s: float = Field(default=30.0, description="Seconds before one Tesseract call is killed.")
    tesseract_psm: int = Field(default=3, description="Tesseract page segmentation mode (3 = fully automatic).")
    tesseract_fallback_lang: str = Field(
        default="eng", description="Language pack used when the page's script is unknown or none of its packs is installed."
    )
    witness_ignore_checks: list[str] = Field(
        default_factory=lambda: ["low_confidence"],
        description="Failed checks that do NOT drop a witness from the vote (low confidence is no proof the text is wrong).",
    )
    block_margin_pt: float = Field(
        default=6.0, description="A witness word/line belongs to a block if its centre is within the block grown by this."
    )
    min_geometry_coverage: float = Field(
        default=0.75,
        description="Vote per block only if at least this share of each witness's characters falls inside the first "
        "reading's blocks; else vote once over the whole page.",
    )
