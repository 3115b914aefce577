from pydantic import Field

from .base import StrictModel


class TextLayerConfig(StrictModel):
    """Knobs for reading a good text layer with layout (owned by pagerouter.textlayer).

    Sizes in points are absolute; "em" means the page's body font size.
    """

    # --- invisible text ---------------------------------------------------------------
    skip_clipped_text: bool = Field(
        default=True, description="Drop glyphs MuPDF reports as fully clipped away (not shown on the page)."
    )
    drop_text_under_images: bool = Field(
        default=True,
        description="Drop text that a later-painted opaque image covers (not shown on the page: a hidden OCR "
        "layer under a scan). Costs one paint-order pass, only on pages that list images.",
    )
    hidden_text_min_image_share: float = Field(
        default=0.02,
        ge=0,
        le=1,
        description="Only images covering at least this share of the page are taken to hide the text under them.",
    )

    # --- lines and paragraphs --------------------------------------------------------
    merge_gap_em: float = Field(
        default=0.6, description="Fragments on one baseline closer than this (em) are one line."
    )
    bullet_merge_gap_em: float = Field(
        default=3.0, description="A lone bullet/number fragment joins the text on its baseline within this gap (em)."
    )
    merge_justified_gap_em: float = Field(
        default=3.0,
        description="A wider gap between fragments on one baseline still joins them when the rows around it "
        "show text flowing through it (justified text that MuPDF split at its stretched spaces).",
    )
    merge_context_lines: float = Field(
        default=2.5,
        description="Rows whose centre lies within this many line heights judge a gap between fragments: "
        "text crossing it (a word gap) or text on both sides of it (a column gutter, never bridged).",
    )
    paragraph_gap_ratio: float = Field(
        default=0.75,
        description="A vertical gap between lines larger than this times the line height starts a new paragraph.",
    )
    paragraph_extra_pitch_ratio: float = Field(
        default=0.5,
        description="Within a paragraph of two or more lines, a line whose distance from the previous one exceeds "
        "the paragraph's own line pitch by more than this times the line height starts a new paragraph (catches "
        "paragraph spacing where the font's line boxes overlap, so the plain gap looks small).",
    )
    indent_em: float = Field(default=1.0, description="A first-line indent of at least this (em) starts a new paragraph.")

    # --- reading order (recursive XY cut) ---------------------------------------------
    min_column_gap_pt: float = Field(default=7.0, description="Narrowest vertical whitespace gutter between columns.")
    min_column_gap_em: float = Field(default=0.7, description="Narrowest gutter relative to the body font size.")
    narrow_gutter_em: float = Field(
        default=0.4,
        description="A whitespace strip narrower than the column gap but at least this wide (em) still separates "
        "columns when it runs past narrow_gutter_min_lines lines on each side (no line crosses it).",
    )
    narrow_gutter_min_lines: int = Field(
        default=4, description="Lines needed on each side of a narrow gutter (narrow_gutter_em) for it to count."
    )
    gutter_max_blockers: float = Field(
        default=0.12,
        description="A gutter may be crossed by at most this share of a region's lines (full-width titles, "
        "figures) and still split columns; the crossing lines cut the region into bands.",
    )
    form_pair_share: float = Field(
        default=0.7,
        description="If this share of the short items left of a gutter have a partner at the same height on "
        "the right, the gutter separates labels from values (a form), not columns: read row by row.",
    )
    form_max_words: float = Field(default=3.0, description="Median words per item below which items count as short.")
    native_order_min_reentries: int = Field(
        default=3,
        description="When the cut's order comes back this many times to a MuPDF text block of prose lines it had "
        "left (interleaved columns), the page is read in MuPDF's own order instead.",
    )

    # --- headings, lists, captions, footnotes -----------------------------------------
    heading_size_ratio: float = Field(
        default=1.12, description="Text at least this times the body size (and short) is a heading."
    )
    heading_max_lines: int = Field(default=3, description="Headings are at most this many lines.")
    heading_max_chars: int = Field(default=160, description="Headings are at most this many characters.")
    bold_heading: bool = Field(default=True, description="Short all-bold lines at body size are (lowest-level) headings.")
    max_heading_level: int = Field(default=6, description="Deepest heading level emitted.")
    heading_size_tolerance_pt: float = Field(
        default=0.6, ge=0,
        description="Heading sizes closer than this are one level of the document's size ladder (the same style "
        "measured 14.5 and 15 pt is one level, not two).",
    )
    letter_spacing: bool = Field(
        default=True,
        description="Join letter-spaced text (`A N N U A L   R E P O R T`: one glyph per word, wide tracking) into "
        "its words (`ANNUAL REPORT`); word breaks come from the glyphs' gaps.",
    )
    letter_spacing_word_gap_em: float = Field(
        default=0.15, ge=0,
        description="In letter-spaced text, a gap between glyphs wider than the run's letter gap by this (em) is "
        "a word break (a space advance is 0.25-0.6 em).",
    )
    letter_spacing_max_track_em: float = Field(
        default=0.8, ge=0,
        description="Letter gaps wider than this (em) are not tracking (single-letter table cells, a spaced-out "
        "scale): such text is left as it is.",
    )
    letter_spacing_join_pitches: float = Field(
        default=2.5, ge=0,
        description="Two letter-spaced fragments on one baseline join (one word gap apart) when the gap between "
        "them is at most this many letter pitches (advance plus tracking) of the fragments.",
    )
    overprint_max_offset_pt: float = Field(
        default=1.2, ge=0,
        description="The same text drawn again within this offset (pt, and at most 0.15 em) is one text printed "
        "several times to look bold: kept once, marked bold.",
    )
    footnote_size_ratio: float = Field(
        default=0.88, description="Text at most this times the body size in the bottom zone may be a footnote."
    )
    footnote_zone: float = Field(default=0.3, description="Bottom share of the page where footnotes are looked for.")

    # --- words and marks: scripts, presentation forms, footnotes, RTL, captions ---------
    mark_scripts: bool = Field(
        default=True,
        description="Keep superscripts/subscripts as <sup>…</sup>/<sub>…</sub> in the block text (smaller "
        "spans whose baseline is raised/lowered against the line's dominant text).",
    )
    script_max_size_ratio: float = Field(
        default=0.85, gt=0, le=1, description="A script span is at most this times the line's dominant font size."
    )
    script_min_shift_em: float = Field(
        default=0.1,
        ge=0,
        description="...and its baseline is shifted at least this (times the dominant size) up (sup) or down "
        "(sub); less is a size change on one baseline (small caps), never marked.",
    )
    script_max_chars: int = Field(
        default=16, ge=1, description="Longer smaller-and-shifted spans are other text on the line, not scripts."
    )
    normalise_presentation_forms: bool = Field(
        default=True,
        description="NFKC-normalise Arabic/Hebrew presentation forms and Latin ligatures (U+FB00–FEFE) to the "
        "letters they show; only those characters, so superscript digits and the like stay as written.",
    )
    footnote_split: bool = Field(
        default=True,
        description="In small type, a line starting with a footnote marker (superscript number, *, †, ‡, §, ¶, "
        "or the next number) starts a new footnote block instead of continuing the previous one.",
    )
    attach_captions: bool = Field(
        default=True,
        description="Move a caption next to the figure/table it labels (just below or above it, overlapping "
        "horizontally) when reading order put other text between them.",
    )
    caption_max_gap_em: float = Field(
        default=3.0, ge=0, description="Largest vertical gap (em) between a caption and the figure/table it labels."
    )

    # --- running headers/footers, page numbers ------------------------------------------
    furniture_band: float = Field(
        default=0.11, description="Top/bottom share of the page height where headers/footers/page numbers live."
    )
    furniture_sample_pages: int = Field(
        default=24, description="Pages sampled (evenly) by FurnitureModel.from_document; bounds its cost and memory."
    )
    furniture_min_share: float = Field(
        default=0.3, description="A band line repeated on at least this share of sampled pages is furniture."
    )
    furniture_min_pages: int = Field(default=2, description="...and on at least this many sampled pages.")
    furniture_max_chars: int = Field(default=160, description="Longer band lines are never furniture.")
    # per-page furniture score (furniture_cues.py): needs no other page. Each cue is 0..1, the
    # score is the weighted sum minus penalties; a band line scoring >= furniture_min_score is
    # furniture. Repetition across pages (above) decides on its own and always wins.
    furniture_band_max_pt: float = Field(
        default=120.0, gt=0,
        description="The top/bottom band is at most this many points deep (a 14000 pt tall log plot has no "
        "1500 pt header band).",
    )
    furniture_min_score: float = Field(
        default=0.7, description="A band line whose per-page furniture score reaches this is furniture."
    )
    furniture_w_content: float = Field(
        default=0.5, description="Weight of the content cue (URL, DOI, email, date, download/publish/copyright "
        "stamp, volume/issue line, banner separators, document/revision numbers)."
    )
    furniture_w_gap: float = Field(
        default=0.35, description="Weight of the whitespace between the line (or its stack of band lines) and the body."
    )
    furniture_gap_full_em: float = Field(
        default=2.5, gt=0, description="A gap to the body of this many body sizes gives the full gap cue."
    )
    furniture_w_position: float = Field(
        default=0.25, description="Weight of closeness to the page edge (1 at the edge, 0 at the band's inner edge)."
    )
    furniture_w_size: float = Field(
        default=0.2, description="Weight of smaller-than-body type (full at 0.75 x body size)."
    )
    furniture_w_short: float = Field(
        default=0.1, description="Weight of a short line (full up to 60 characters, none at furniture_max_chars)."
    )
    furniture_w_layout: float = Field(
        default=0.45, description="OCR pages: weight of the layout model calling the region header/footer."
    )
    furniture_heading_ratio: float = Field(
        default=1.3, description="Band text at least this times the body size counts as heading type for the penalty "
        "below (a 9 pt journal line over an 8 pt body is not a title)."
    )
    furniture_heading_penalty: float = Field(
        default=0.5, description="Subtracted for heading-size type (a title at the top of the first page is no header)."
    )
    furniture_body_penalty: float = Field(
        default=1.0, description="Subtracted when the line runs on, at body leading and the same size, past the band: "
        "the first lines of a paragraph that starts near the page edge."
    )
    furniture_uncued_min_position: float = Field(
        default=0.35, description="A band line without any cue must lie at least this far out in the band (position "
        "cue; 1 = at the page edge): uncued small text deep in the band is a figure's labels."
    )
    furniture_prose_penalty: float = Field(
        default=0.4, description="Subtracted for a body-size line that reads as a sentence (8+ words, mostly "
        "lower-case); its weak cues (dates, volume numbers, URLs) count half."
    )
    furniture_bottom_needs_cue: bool = Field(
        default=True, description="A bottom-band line needs a cue (content, a page number beside it, the layout "
        "model) to be furniture by its own page: small type far below the body is as often a footnote."
    )
    furniture_footnote_penalty: float = Field(
        default=0.6, description="Subtracted for a bottom line that starts with a footnote mark (1Text, *, †)."
    )
    furniture_chain_gap: float = Field(
        default=0.8, description="Band lines closer than this many line heights form one stack (a 2-3 line banner) "
        "whose gap to the body is what counts."
    )
    furniture_runon_gap: float = Field(
        default=0.3, description="A band line followed, closer than this many line heights, by same-size text past "
        "the band runs on into the body (MuPDF line boxes of one paragraph nearly touch)."
    )
    furniture_max_band_lines: int = Field(
        default=12, description="A band holding more lines than this (a map, a chart's axis, a table) gets no "
        "per-page furniture; only repetition applies there."
    )
    furniture_max_page_numbers: int = Field(
        default=2, description="More number-only lines than this in one band are a scale or a table row, not page numbers."
    )
    furniture_head_max_size_ratio: float = Field(
        default=0.92, gt=0, description="A running head recognised on its page alone (no cue, no repetition) is set "
        "in type at most this times the body size: a title, a greeting or a first line is not smaller than the body."
    )
    furniture_head_min_position: float = Field(
        default=0.45, ge=0, le=1, description="...lies at least this far out in the top band (1 = at the page edge)..."
    )
    furniture_head_min_gap_em: float = Field(
        default=0.8, ge=0, description="...is set apart from the text below by at least this many body sizes..."
    )
    furniture_head_max_words: int = Field(
        default=10, ge=1, description="...and has at most this many words (author names or a short title)."
    )
    furniture_context_pages: int = Field(
        default=5, ge=0,
        description="When fewer pages than this are converted from a longer document, neighbouring pages are "
        "sampled too, so a page converted alone still gets repetition evidence.",
    )

    # --- forms: AcroForm widgets and printed label/value pairs (forms.py) -------------------
    read_form_fields: bool = Field(
        default=True,
        description="Read interactive form fields (AcroForm widgets): each value, with its field name, goes onto its "
        "label's line as one `form_field` block; the text its appearance drew is not written twice. Only pages with "
        "widgets pay for it.",
    )
    form_label_max_gap_em: float = Field(
        default=25.0, ge=0,
        description="Widest gap (em) between a field and the text left of it on its row that is still its label.",
    )
    form_box_label_max_gap_em: float = Field(
        default=3.0, ge=0, description="Widest gap (em) between a checkbox or radio button and its label beside it."
    )
    form_label_above_gap: float = Field(
        default=0.8, ge=0,
        description="A field without a label on its row takes the line just above it as its label when the gap "
        "between them is at most this many label line heights.",
    )
    pair_printed_labels: bool = Field(
        default=True,
        description="Join a printed 'Label:' fragment with the value beside it on its row (rows made only of such "
        "pairs, whose value does not run on to the next line) into one `form_field` block.",
    )
    form_label_max_chars: int = Field(default=40, ge=1, description="Longer text ending in ':' is no printed label.")
    form_label_max_words: int = Field(default=5, ge=1, description="...nor is text of more words than this.")
    form_value_max_words: int = Field(
        default=10, ge=1, description="A printed value beside its label has at most this many words (longer is prose)."
    )
    form_pair_max_gap_share: float = Field(
        default=0.5, ge=0, le=1,
        description="Widest gap between a printed label and its value, as a share of the page width.",
    )

    # --- tables ----------------------------------------------------------------------
    detect_tables: bool = Field(default=True, description="Look for tables where drawings/geometry suggest one.")
    table_min_rows: int = Field(default=3, description="Rows a table needs (ruled or whitespace-aligned).")
    table_min_cols: int = Field(default=3, description="Aligned columns a whitespace (unruled) table needs.")
    table_max_cell_words: float = Field(
        default=5.0,
        description="Median words per fragment in a whitespace-table row; longer fragments are prose columns.",
    )
    table_bridge_rows: int = Field(
        default=2,
        ge=0,
        description="A whitespace table's run of aligned rows passes over at most this many consecutive rows of "
        "one or two fragments (section labels, a unit line, a wrapped label) when an aligned row follows.",
    )
    table_header_max_lines: int = Field(
        default=4,
        ge=1,
        description="Lines a whitespace table's header may take (group labels over column groups, stacked "
        "header cells, a unit line); lines right above the aligned rows that stand over the value columns "
        "join the table up to this many.",
    )
    table_html_header: bool = Field(
        default=True,
        description="Write a table with several header rows (a label spanning a group of columns over "
        "per-column headers) as an HTML table with colspans in the Markdown: a GFM table has one header row.",
    )
    ruled_table_confidence: float = Field(default=1.0, description="Confidence of a table PyMuPDF found from rules.")
    text_table_confidence: float = Field(
        default=0.8, description="Confidence of a table rebuilt from whitespace alignment (cells are a guess)."
    )

    # --- figures ---------------------------------------------------------------------
    min_figure_pt: float = Field(default=24.0, description="Images smaller than this on both sides are decoration.")
    min_figure_area: float = Field(
        default=0.004, description="Images covering less than this share of the page are decoration."
    )
    vector_figures: bool = Field(
        default=True, description="Large clusters of vector drawings that are not tables become figure blocks."
    )
    vector_figure_min_paths: int = Field(default=12, description="Drawing items a vector figure needs.")
    max_graphics_items: int = Field(
        default=20000,
        description="Pages with more drawing operations than this (maps, schematics) skip rule and vector-figure analysis.",
    )
    vector_figure_max_text_share: float = Field(
        default=0.5, description="A drawing cluster mostly covered by text lines is a text box, not a figure."
    )
    vector_figure_min_area: float = Field(default=0.02, description="Page share a vector figure needs.")
