"""Thresholds for the per-page route decision (owned by `pagerouter.triage`).

Every number `pagerouter.triage.decide` compares a measurement with lives here; the reasons
in a TriageDecision name the field that decided, so a surprising route can be traced to one
knob. Shares are fractions (0..1); sizes in points are page points (1/72 inch).
"""

from pydantic import Field

from .base import StrictModel


class TriageConfig(StrictModel):
    """Thresholds for the per-page route decision (owned by pagerouter.triage)."""

    # --- how much text -------------------------------------------------------------------
    min_chars_for_text_layer: int = Field(
        default=20, ge=0, description="Fewer visible text-layer characters (non-space) than this is no text layer."
    )
    fast_path_min_chars: int = Field(
        default=200,
        ge=0,
        description="A page with at least this many healthy visible characters, no sizeable image and no "
        "near-white text is routed to the text layer without rendering it.",
    )

    # --- rendering (ink) -----------------------------------------------------------------
    ink_dpi: float = Field(default=36, gt=0, description="DPI of the grayscale render used to measure ink on pages without images.")
    image_dpi: float = Field(
        default=72,
        gt=0,
        description="DPI of the grayscale render used on pages with sizeable images (text-likeness of pictures needs "
        "letters a few pixels tall).",
    )
    max_render_pixels: int = Field(
        default=3_000_000, gt=0, description="Cap on render size; the DPI is lowered for larger pages (memory bound)."
    )
    ink_gray_level: int = Field(default=190, ge=1, le=255, description="A render pixel darker than this gray level is ink.")
    blank_mark_contrast: int = Field(
        default=40,
        ge=1,
        le=255,
        description="On a page without text, ink counts as a mark only where it is at least this many gray levels "
        "darker than its ~12 pt surroundings (so uniform grey, tinted paper and soft shadows are not marks).",
    )
    blank_max_marks: int = Field(
        default=2,
        ge=0,
        description="A page without text is blank only if it shows at most this many letter-sized marks (dust, a "
        "punch hole); a line of text, a stamp or a page number is more. Marks touching the page edge (scanner "
        "shadows, borders) and specks below text_component_min_height_pt are not counted.",
    )
    blank_max_text_rows: int = Field(
        default=0, ge=0,
        description="A page without text is blank only if its ink forms at most this many rows of letter-like blobs "
        "(faint print too light for the mark test's gray level still forms rows).",
    )
    blank_min_mark_pt: float = Field(
        default=8.0,
        gt=0,
        description="A page without text is blank only if its largest mark is shorter than this (points): one "
        "signature, initial or capital letter is content.",
    )
    blank_max_mark_elongation: float = Field(
        default=15.0,
        gt=1,
        description="A mark whose long side is at least this times its short side is a line (a fold, the inner "
        "edge of a shadow), not content.",
    )
    blank_edge_margin_pt: float = Field(
        default=10.0,
        ge=0,
        description="Marks reaching into this outer margin of the page (points) are scanner shadows, borders or "
        "punched edges, not content, when deciding whether a page without text is blank.",
    )

    # --- text quality ----------------------------------------------------------------------
    max_bad_char_share: float = Field(
        default=0.05,
        ge=0,
        le=1,
        description="Most replacement (U+FFFD), private-use, control, `(cid:N)` and glyph-id (`/31`) characters "
        "allowed, as a share of the visible non-space characters.",
    )
    min_words_for_word_check: int = Field(
        default=8, ge=1, description="Fewer letter words than this and the plausible-word share is not judged."
    )
    max_words_checked: int = Field(
        default=400, ge=10, description="Words sampled (evenly) for the plausible-word share; bounds the cost on dense pages."
    )
    min_plausible_word_share: float = Field(
        default=0.7, ge=0, le=1, description="Least share of letter words that must look like words of their script."
    )
    near_zero_plausible_word_share: float = Field(
        default=0.1, ge=0, le=1,
        description="A plausible-word share at most this fails the layer even below min_words_for_word_check "
        "(from min_words_for_near_zero words on): a short page of nothing but garbage words is garbage.",
    )
    min_words_for_near_zero: int = Field(
        default=3, ge=1, description="Fewest letter words for near_zero_plausible_word_share to be judged."
    )
    max_mixed_script_word_share: float = Field(
        default=0.02, ge=0, le=1,
        description="Most share of words that mix a non-Latin script's letters with letters of another script "
        "(a Latin-extended `ǉ` inside Cyrillic, Greek, Arabic or Hebrew words: a font whose map turns one letter "
        "into another script's). Real text keeps one script per word.",
    )
    min_mixed_script_words: int = Field(
        default=3, ge=1, description="...and at least this many such words fail the layer."
    )
    max_consonant_run: int = Field(
        default=6, ge=2, description="A Latin/Cyrillic word with a longer run of consonants is implausible."
    )
    max_case_switches: int = Field(
        default=1, ge=0, description="A word with more lower-to-upper case switches than this (McDonald 1, rIEnD 2) is implausible."
    )
    min_letters_for_frequency_check: int = Field(
        default=60, ge=1, description="Fewer Latin or Cyrillic letters than this and the letter-frequency score is not judged."
    )
    max_letter_cross_entropy: float = Field(
        default=4.9,
        gt=0,
        description="Most bits per letter of the page's letters under a pan-language letter-frequency table of "
        "their script; shifted or cipher-like letter maps score high, real languages low.",
    )
    min_han_for_char_model: int = Field(
        default=30, ge=1,
        description="Han characters scored before the Han character model may judge a page (each carries more "
        "information than an alphabet's letter).",
    )
    min_letters_for_char_model: int = Field(
        default=100,
        ge=1,
        description="Fewer characters of a script than this on a page and its character-model scores "
        "(`char_model_max_bits`, `char_model_min_context_gain`) are not judged; below it too few letters to tell.",
    )
    char_model_max_bits: dict[str, float] = Field(
        default_factory=lambda: {
            "Latin": 6.5, "Cyrillic": 6.5, "Greek": 6.5, "Arabic": 6.0, "Hebrew": 6.0,
            "Devanagari": 7.0, "Thai": 7.0, "Han": 16.3,
        },
        description="Per character script: most bits per letter of the page's letters of that script under its "
        "character model (`pagerouter.triage.char_model`: letter trigrams; Han: common/listed/rare character "
        "classes). A constant code-point shift turns common letters rare and scores far above (healthy text "
        "3-5 bits, Han ~12.8; shifted 7-12, Han 16.7+). Scripts missing here are not judged.",
    )
    char_model_min_context_gain: dict[str, float] = Field(
        default_factory=lambda: {
            "Latin": -0.2, "Cyrillic": 0.0, "Greek": -0.2, "Arabic": -1.0, "Hebrew": -1.4,
            "Devanagari": 0.4, "Thai": 0.4,
        },
        description="Per character script: least bits per letter the letter context (trigrams) must save over "
        "letter frequencies alone. Real writing is predictable from the letters before; a consistent letter "
        "substitution keeps the frequencies but breaks the sequences and the gain turns negative. Set per script "
        "from healthy and substituted samples (the smaller the script's training text, the lower the bar; Hebrew: "
        "real prose -0.2 to -0.5, real words in a repetitive order about -1.1, substituted maps -1.6 to -2.8). "
        "Scripts missing here (Han) are not judged.",
    )
    max_mojibake_share: float = Field(
        default=0.004,
        ge=0,
        le=1,
        description="Most UTF-8-read-as-Latin-1/CP1252 sequences (`Ã©`, `â€™`, `Ð¿`) allowed, as a share of letters.",
    )
    min_mojibake_count: int = Field(default=3, ge=1, description="Fewer mojibake sequences than this are ignored.")

    # --- what the page shows vs. what the layer says --------------------------------------
    max_invisible_text_share: float = Field(
        default=0.5,
        ge=0,
        le=1,
        description="Largest share of text-layer characters that may be invisible (render mode 3) before the page "
        "is treated as a scan with a hidden OCR layer (which may lie) and OCR'd.",
    )
    check_visibility: bool = Field(
        default=True,
        description="Check that each text-layer span is visible on the page (triage/visibility.py): spans under a "
        "later opaque shape, in the colour of what is under them, or over a picture are rendered with and without "
        "their glyphs; spans that change nothing are hidden text, never output, and listed in `hidden_text`.",
    )
    visibility_min_contrast: int = Field(
        default=40, ge=0, le=255,
        description="A span whose colour is within this (0-255, any RGB channel) of the shape or paper under it is "
        "checked on the render.",
    )
    visibility_min_shown_share: float = Field(
        default=0.3, ge=0, le=1,
        description="A span is visible when at least this share of its glyph pixels change the rendered page; a span "
        "partly below it is cut at word boundaries.",
    )
    hidden_layer_proof: bool = Field(
        default=True,
        description="Try to prove a hidden (render mode 3) OCR layer over a scan: a few of its lines, spread over "
        "the page, are read from the image by the small reader's recogniser alone (RapidOCR rec, no detection) and "
        "compared with the layer; agreement routes the page `text_layer` (the layer is read), anything else `ocr`. "
        "Only for scripts the recogniser reads (`ocr.scripts.table.<script>.rapidocr`). Off: every such page is OCR'd.",
    )
    hidden_layer_proof_without_ocr: bool = Field(
        default=True,
        description="Also prove hidden layers when the OCR path is disabled (`ocr.enabled: false`): a proven layer "
        "gives the page's text where the alternative is `needs_ocr` with none; the proof loads only the recognition "
        "model (about 0.3 s once). False: with OCR disabled such pages come out `needs_ocr` without loading anything.",
    )
    hidden_layer_sample_lines: int = Field(
        default=5, ge=1, description="Hidden-layer lines read first for the proof, spread evenly from top to bottom "
        "(a lying layer is refused after this one short read)."
    )
    hidden_layer_every_line: bool = Field(
        default=True,
        description="Once the spread sample agrees, read every other line the hidden layer contributes too (one "
        "batch of line crops through the recogniser, cheaper than OCR of the page): one lying line (\"may sublet\" "
        "where the picture says \"may not sublet\") sends the page to OCR. False: the sample alone decides.",
    )
    hidden_layer_cheaper_route: bool = Field(
        default=True,
        description="With `hidden_layer_every_line`, prove the layer only when that is estimated cheaper than OCR of "
        "the page (crops through the recogniser vs render, detection and recognition of its rows; constants measured "
        "in `triage/proof_cost.py`), and give the proof up for OCR midway when the lines that disagree so far make the "
        "rest dearer than OCR. False: every such layer is proven, whatever it costs.",
    )
    hidden_layer_min_sample_lines: int = Field(
        default=3,
        ge=1,
        description="Fewer sampleable hidden lines than this (and fewer agreeing lines than this) and the layer is "
        "not proven: the page is OCR'd.",
    )
    hidden_layer_min_line_chars: int = Field(
        default=8, ge=1, description="A hidden line needs at least this many non-space characters to be sampled."
    )
    hidden_layer_min_line_height_pt: float = Field(
        default=2.5, ge=0, description="A hidden line lower than this (points) is not sampled (rules, specks)."
    )
    hidden_layer_max_line_cer: float = Field(
        default=0.2,
        ge=0,
        description="A sampled line agrees when the character error rate between the layer's text and the "
        "recogniser's reading (spaces ignored) is at most this.",
    )
    hidden_layer_min_agreeing_share: float = Field(
        default=1.0, ge=0, le=1,
        description="Least share of the sampled lines that must agree to keep the layer. 1.0: one sampled line that "
        "disagrees is evidence that the layer is wrong somewhere, not noise (a wrong amount is a wrong document).",
    )
    hidden_layer_digit_lines: int = Field(
        default=16, ge=0,
        description="Once the lines spread over the page agree, the words holding digits on up to this many more "
        "hidden lines (spread evenly among the lines with digits) are read too, each word a short crop: a digit the "
        "layer got wrong changes an amount, a date or a part number, and every sampled digit must match exactly.",
    )
    hidden_layer_max_cer: float = Field(
        default=0.1,
        ge=0,
        description="Most character error rate between layer and recogniser over the whole sample "
        "(character-weighted) to keep the layer.",
    )
    max_text_under_image_share: float = Field(
        default=0.5,
        ge=0,
        le=1,
        description="Largest share of visible text area that may be painted over by a later image (a hidden OCR "
        "layer under a scan) before the page is OCR'd.",
    )
    max_unmapped_font_share: float = Field(
        default=0.3,
        ge=0,
        le=1,
        description="Largest share of characters in fonts without a Unicode map (Type0 Identity or Type3 fonts "
        "with no ToUnicode) tolerated when the text itself also looks doubtful (plausible words below "
        "`strict_plausible_word_share`).",
    )
    strict_plausible_word_share: float = Field(
        default=0.9, ge=0, le=1, description="Plausible-word share a layer from unmapped fonts must reach to be trusted."
    )
    max_inkless_text_share: float = Field(
        default=0.5,
        ge=0,
        le=1,
        description="Largest share of visible characters whose boxes show no ink in the render (white or clipped "
        "text: the layer says something the page does not show).",
    )
    light_text_level: int = Field(
        default=235,
        ge=0,
        le=255,
        description="Text whose colour channels are all at least this light may be invisible on a white page; "
        "its presence forces the render check.",
    )

    # --- pictures --------------------------------------------------------------------------
    min_image_area_share: float = Field(
        default=0.02, ge=0, le=1, description="Images smaller than this share of the page are ignored (logos, bullets)."
    )
    min_image_side_pt: float = Field(
        default=40, ge=0, description="Images with a side shorter than this (points) cannot hold a line of readable text."
    )
    text_component_min_height_pt: float = Field(
        default=3.0, gt=0, description="Smallest letter height (points) counted as a text-like stroke component."
    )
    text_component_max_height_pt: float = Field(
        default=40.0, gt=0, description="Largest letter height (points) counted as a text-like stroke component."
    )
    min_text_components: int = Field(
        default=15, ge=1, description="Least number of letter-like components, aligned in rows, for a picture to hold text."
    )
    min_aligned_component_share: float = Field(
        default=0.55,
        ge=0,
        le=1,
        description="Least share of letter-like components that sit in a row with neighbours of similar height.",
    )
    max_component_ink_share: float = Field(
        default=0.45,
        ge=0,
        le=1,
        description="A picture region whose ink (after thresholding) covers more than this share looks like a photo "
        "or a dark background, not printed text.",
    )
    scan_text_image_share: float = Field(
        default=0.5,
        ge=0,
        le=1,
        description="When pictures holding text cover at least this share of the page, the whole page is OCR'd "
        "instead of reading the layer plus the pictures (`mixed`).",
    )
    min_text_blob_density: float = Field(
        default=2.0,
        ge=0,
        description="Least letter-like blobs in rows per 10,000 pt2 of picture (a 1.4-inch square): a few labels "
        "in a big, mostly empty or transparent image are not a picture of text.",
    )
    min_text_lines: int = Field(
        default=3,
        ge=1,
        description="Ink that forms at least this many lines of text (rows of `min_line_blobs` similar-height "
        "letter-like blobs) outside the text layer is text the layer does not hold, whatever the blob density: "
        "the picture (or a sparse page's ink) is OCR'd. A stamp, a logo or a caption is one or two lines.",
    )
    min_line_blobs: int = Field(
        default=5, ge=2, description="Least letter-like blobs, chained in one row, for the row to count as a line of text."
    )
    min_drawn_text_density: float = Field(
        default=3.0,
        ge=0,
        description="On a sparse page without pictures, letter-like blobs in rows outside the text layer, per "
        "10,000 pt2 of page, from which the page is taken to hold text drawn as vector outlines -> `ocr`.",
    )
    scan_max_layer_chars: int = Field(
        default=400,
        ge=0,
        description="A page whose text pictures cover `scan_text_image_share` is OCR'd whole only if its layer "
        "has at most this many characters (a header, a page number); richer layers go `mixed`.",
    )
    max_pictures_checked: int = Field(
        default=12, ge=0, description="At most this many of the largest pictures are tested for text (bounds the cost)."
    )
