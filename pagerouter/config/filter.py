"""The document filter (`pagerouter/intake/docfilter.py`): which whole files a batch or `convert --filter`
skips before converting them. Off by default; every threshold is judged on the text layer of the
first `pages` pages only, so a decision costs a text read, never OCR.
"""

from __future__ import annotations

from pydantic import Field, field_validator

from ..common.unicode_scripts import JAPANESE, KANA, SCRIPT_NAMES
from .base import StrictModel

PROFILED_LANGUAGES = ("en", "de", "fr", "es", "it", "pt", "nl")
"""Languages with a stopword profile in pagerouter/intake/docfilter.py (the only ones `keep_languages` takes)."""
PAGE_SCRIPTS = frozenset(SCRIPT_NAMES - {KANA} | {JAPANESE})


class FilterConfig(StrictModel):
    enabled: bool = Field(
        default=False,
        description="Judge each file before converting it and skip the ones the checks below reject (batch: a "
        "`skipped` journal record with the reasons; convert --filter: one line, no output). False changes nothing.",
    )
    pages: int = Field(default=10, ge=1, description="Read the text layer of this many first pages to judge a file.")
    timeout_s: float = Field(
        default=30.0, gt=0,
        description="Seconds reading those text layers may take (in a child process when isolation is on); a file "
        "that cannot be read in time is kept unjudged and its conversion reports the problem.",
    )
    keep_scripts: list[str] = Field(
        default_factory=list,
        description="Page scripts to keep (pagerouter/common/unicode_scripts.py names: Latin, Cyrillic, Greek, Arabic, Han, "
        "Japanese, Hangul, ...); a file whose text is dominated by another script is skipped. Empty: any script.",
    )
    keep_languages: list[str] = Field(
        default_factory=list,
        description="Languages to keep, as codes with a shipped stopword profile (en, de, fr, es, it, pt, nl). "
        "Judged on Latin-script text only; text of another script is skipped (none of these is written in it); "
        "a Latin text whose language is not clearly one of the profiles is kept. Empty: any language.",
    )
    min_language_words: int = Field(
        default=40, ge=1, description="Words needed before the language is judged (fewer: kept, not judged)."
    )
    min_language_share: float = Field(
        default=0.08, ge=0, le=1,
        description="Share of the words that must be the best language's distinctive stopwords for it to count as "
        "detected (running prose in a profiled language scores about 0.2-0.4).",
    )
    min_language_margin: float = Field(
        default=2.0, ge=1,
        description="The best language's share must be this many times the runner-up's, else the language is "
        "undetermined and the file is kept.",
    )
    no_text_chars: int = Field(
        default=20, ge=0,
        description="Text-layer characters at or below which the file has no text layer to judge (a scan): kept.",
    )
    min_chars: int = Field(
        default=200, ge=0,
        description="Too little text: a file with a text layer but fewer characters than this in the pages read, "
        "and no image on them that OCR could read, is skipped as (nearly) empty.",
    )
    max_spam_share: float = Field(
        default=0.03, ge=0, le=1,
        description="SEO/download spam: skipped when this share of the words or more are spam keywords "
        "(download, free, ebook, epub, torrent, casino, ...).",
    )
    max_top_word_share: float = Field(
        default=0.08, ge=0, le=1,
        description="Keyword stuffing: skipped when the most frequent non-stopword word is this share of all words "
        "or more (in prose it is rarely above 0.03).",
    )
    min_stuffing_words: int = Field(
        default=100, ge=1, description="Words needed before keyword stuffing is judged (short texts repeat a name)."
    )
    max_line_repeat_share: float = Field(
        default=0.6, ge=0, le=1,
        description="Form letter / boilerplate: skipped when this share of the text lines or more also occur on "
        "another page read (headers and footers alone stay far below it).",
    )
    min_repeat_pages: int = Field(
        default=3, ge=2, description="Pages with text needed before line repetition is judged."
    )
    max_form_density: float = Field(
        default=8.0, ge=0,
        description="Blank template: skipped when form fields plus blanks (`____`, `[Name]`, `<<Name>>`) per 100 "
        "words reach this and there are at least `min_form_fields` of them.",
    )
    min_form_fields: int = Field(default=8, ge=1, description="Fields plus blanks needed before a file counts as a blank form.")

    @field_validator("keep_languages")
    @classmethod
    def _known_languages(cls, v: list[str]) -> list[str]:
        # a language without a profile could never be detected, so keeping it would keep nothing
        unknown = [x for x in v if x not in PROFILED_LANGUAGES]
        if unknown:
            raise ValueError(f"no stopword profile for {unknown}; profiled: {list(PROFILED_LANGUAGES)}")
        return v

    @field_validator("keep_scripts")
    @classmethod
    def _known_scripts(cls, v: list[str]) -> list[str]:
        unknown = [x for x in v if x not in PAGE_SCRIPTS]
        if unknown:
            raise ValueError(f"unknown scripts {unknown}; known: {sorted(PAGE_SCRIPTS)}")
        return v
