"""The options of one conversion request: one validated model for every front end.

HTTP (query string and multipart form fields), gRPC (ConvertRequest / PageRequest), the
in-process `Converter` and the CLI all build a `RequestOptions` (or `PageOptions` for the
one-page routes) and nothing else, so an option means the same everywhere and a bad one is
refused the same way: `OptionError`, which the HTTP front answers with 422 and gRPC with
INVALID_ARGUMENT (trailing metadata `error-code: bad_request`).

    opts = RequestOptions.from_fields({"ocr": "force", "languages": "eng+deu"})
    opts = RequestOptions(pages="1-3", images=True)

What each option does, and where it is applied:
- `ocr`: `auto` lets triage decide; `force` sends every page to OCR (its text layer is not
  used); `off` reads text layers only: a page that needs OCR comes back `flagged` (`ocr_off`)
  with whatever text layer it has. Applied in `pipeline.DocumentTriage`.
- `languages`: the Tesseract packs this request's Tesseract readings use (the reader for
  scripts RapidOCR cannot read, and the vote's Tesseract witness) instead of the per-script
  table in config. Must be installed (`tesseract --list-langs`). Travels on the `OcrTask`.
- `images`: figure blocks carry their crop as base64 PNG (`Block.image_png_base64`) in the JSON
  (and gRPC) output. Markdown output does not embed them (it stays text; ask for JSON).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

OcrMode = Literal["auto", "force", "off"]
OCR_MODES: tuple[str, ...] = ("auto", "force", "off")
FIGURE_DPI = 150
"""Resolution of figure crops rendered from a PDF page for `images` (text-layer pages)."""

_LANG_RE = re.compile(r"^[A-Za-z0-9_]{2,32}$")


class OptionError(ValueError):
    """A request option that is unknown or has a bad value; `field` names it ('' = several)."""

    code = "bad_request"

    def __init__(self, message: str, field: str = ""):
        super().__init__(message)
        self.message, self.field = message, field


class _Options(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    password: str | None = Field(default=None, description="Password of an encrypted PDF.")
    filename: str | None = Field(
        default=None, description="Name of the file, shown in messages and as `source` (multipart: the part's name)."
    )
    wait: Literal["interactive", "bulk"] | None = Field(
        default=None,
        description="How long flagged pages wait for the escalation tier: `interactive` (default, "
        "serve.escalation_timeout_s) or `bulk` (serve.escalation_timeout_bulk_s).",
    )
    escalation_wait_s: float | None = Field(
        default=None, gt=0, allow_inf_nan=False,
        description="Explicit wait in seconds for the escalation tier, capped at the bound of `wait`.",
    )
    ocr: OcrMode = Field(
        default="auto",
        description="`auto`: triage decides which pages need OCR. `force`: every page is read by OCR, even "
        "with a good text layer. `off`: text layers only; a page that needs OCR is `flagged` (`ocr_off`) "
        "with whatever text layer it has.",
    )
    languages: list[str] | None = Field(
        default=None,
        description="Tesseract language packs for this request's Tesseract readings, e.g. [\"eng\", \"deu\"] "
        "(text fields: `eng+deu` or `eng,deu`); default: the per-script packs of the config. Each must "
        "be installed on the server.",
    )
    images: bool = Field(
        default=False,
        description="Figure blocks carry their image as base64 PNG (`image_png_base64`) in JSON output. "
        "Markdown output does not embed images.",
    )

    @field_validator("languages", mode="before")
    @classmethod
    def _split_languages(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = [v for v in re.split(r"[+,\s]+", value) if v]
        if isinstance(value, (list, tuple)):
            for v in value:
                if not isinstance(v, str) or not _LANG_RE.match(v):
                    raise ValueError(f"{v!r} is not a Tesseract language pack name (e.g. eng, deu, chi_sim)")
            value = list(dict.fromkeys(value)) or None  # [] = not given
        return value

    @field_validator("password", "filename", "wait", mode="before")
    @classmethod
    def _blank_is_unset(cls, value: Any) -> Any:
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("wait", mode="before")
    @classmethod
    def _wait_lower(cls, value: Any) -> Any:
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("escalation_wait_s", mode="before")
    @classmethod
    def _blank_seconds(cls, value: Any) -> Any:
        return None if isinstance(value, str) and not value.strip() else value

    # ------------------------------------------------------------------ building
    @classmethod
    def accepted(cls) -> list[str]:
        return list(cls.model_fields)

    @classmethod
    def from_fields(cls, fields: dict[str, Any]):
        """The options of text fields (HTTP query/form) or keyword values; raises OptionError
        naming the unknown field (and the accepted ones) or the field and its bad value."""
        try:
            return cls.model_validate(fields)
        except ValidationError as exc:
            raise OptionError(_one_line(exc, cls), _field_of(exc)) from None

    def selection(self) -> str | None:
        """The page selection to convert (None = all pages)."""
        return getattr(self, "pages", None)

    def check_languages(self, installed: frozenset[str] | None = None) -> None:
        """OptionError when a requested pack is not installed (`installed`: default Tesseract's list)."""
        if not self.languages:
            return
        have = installed if installed is not None else installed_languages()
        if not have:
            raise OptionError("languages: Tesseract is not installed on this server, so no language pack can be used",
                              "languages")
        missing = [lang for lang in self.languages if lang not in have]
        if missing:
            raise OptionError(
                f"languages: {', '.join(missing)} not installed; installed packs: {', '.join(sorted(have)) or 'none'}",
                "languages",
            )


class RequestOptions(_Options):
    """Options of a document conversion (`/v1/convert`, ConvertDocument/StreamDocument, the CLI)."""

    pages: str | None = Field(
        default=None, description="Page selection like `1-3,7` or `5-` (1-based; default: all pages)."
    )
    format: Literal["json", "md"] = Field(default="json", description="Output format: `json` (Document) or `md`.")
    stream: bool = Field(
        default=False,
        description="Stream NDJSON lines, one per page as it finishes, then a `document` line (JSON only).",
    )

    @field_validator("pages", mode="before")
    @classmethod
    def _pages_syntax(cls, value: Any) -> Any:
        if isinstance(value, str):
            if not value.strip():
                return None
            from ..intake.inputs import is_page_selection  # the range is checked against the file

            if not is_page_selection(value):
                raise ValueError(f"{value!r} is not a page selection like 1-3,7")
        return value

    @field_validator("format", mode="before")
    @classmethod
    def _format_lower(cls, value: Any) -> Any:
        return value.strip().lower() if isinstance(value, str) else value

    @model_validator(mode="after")
    def _stream_is_json(self):
        if self.stream and self.format == "md":
            raise ValueError(
                "stream=true streams NDJSON, which is JSON: ask for format=json with stream=true, or stream=false for md"
            )
        return self


class PageOptions(_Options):
    """Options of a one-page conversion (`/v1/pages`, ConvertPage): JSON of that page."""

    page: int = Field(default=1, ge=1, description="1-based number of the page to convert.")

    def selection(self) -> str | None:
        return str(self.page)


def _field_of(exc: ValidationError) -> str:
    locs = {str(e["loc"][0]) for e in exc.errors() if e.get("loc")}
    return locs.pop() if len(locs) == 1 else ""


def _one_line(exc: ValidationError, model: type[_Options]) -> str:
    """One line naming each bad field: unknown ones with the accepted list, bad values with the value."""
    parts: list[str] = []
    for err in exc.errors()[:5]:
        field = ".".join(str(p) for p in err.get("loc", ()))
        value = err.get("input")
        if err["type"] == "extra_forbidden":
            parts.append(f"unknown option `{field}`; accepted options: {', '.join(model.accepted())}")
            continue
        msg = err["msg"].removeprefix("Value error, ")
        if not field:  # a rule across fields (stream with md)
            parts.append(msg)
        elif err["type"] == "literal_error":
            expected = str(err.get("ctx", {}).get("expected", "")).replace("'", "")
            parts.append(f"{field} must be {expected}, not {value!r}")
        elif field == "password":
            parts.append(f"password: {msg}")  # never echo it
        else:
            shown = value if not isinstance(value, (bytes, bytearray)) else "<bytes>"
            parts.append(f"{field}={shown!r}: {msg}")
    return "; ".join(parts)


@lru_cache(maxsize=1)
def _tesseract_languages() -> tuple[str, ...]:
    import shutil

    import pytesseract

    cmd = shutil.which("tesseract")
    if not cmd:
        return ()
    pytesseract.pytesseract.tesseract_cmd = cmd
    return tuple(pytesseract.get_languages(config=""))


def check_served_languages(opts: "_Options") -> None:
    """The server's check of `languages`, on the ingress's node: where Tesseract is installed
    there, an uninstalled pack is refused (nodes are set up alike); where it is not (an ingress
    on a head node without it), the readers' nodes decide: a reader keeps only the packs it has
    and says so on the page, so a request is never refused for what this node lacks."""
    have = installed_languages()
    if have:
        opts.check_languages(have)


def installed_languages() -> frozenset[str]:
    """The Tesseract packs installed here (without `osd`); empty when Tesseract is missing."""
    try:
        return frozenset(_tesseract_languages()) - {"osd"}
    except Exception:  # noqa: BLE001 - a missing or broken Tesseract has no packs
        return frozenset()


__all__ = [
    "FIGURE_DPI", "OCR_MODES", "OcrMode", "OptionError", "PageOptions", "RequestOptions", "check_served_languages",
    "installed_languages",
]
