"""What a page's status says when its work could not be done as asked: a page lost from a
damaged file, a page whose stage failed, a page that needs OCR the request or the config did not
allow. Each is `failed` or `flagged` with a reason naming file and page, never `ok` and empty."""

from __future__ import annotations

import pymupdf

from ..model import CheckResult, Page, TriageDecision

_DAMAGE_MARKERS = (
    "syntax error", "not a stream", "cannot", "invalid", "unknown", "broken", "malformed", "truncated", "premature",
    "corrupt", "damaged",
)


def _damage_report(warnings: str) -> str:
    """First MuPDF warning that says the page's PDF objects are broken, or ''."""
    for line in warnings.splitlines():
        if any(m in line.lower() for m in _DAMAGE_MARKERS):
            return f"PDF damaged, content may be missing (MuPDF: {line.strip()[:160]})"
    return ""


def _lost_page(page: pymupdf.Page) -> str:
    """Why a PDF page's own object is missing from the file (cut off by truncation), or ''.
    MuPDF loads such a page as an empty page of default size, with warnings it does not repeat."""
    doc = page.parent
    try:
        if doc.is_pdf and (not 0 < page.xref < doc.xref_length() or not doc.xref_get_keys(page.xref)):
            return "the page's object is missing from the file (truncated or damaged PDF); its content could not be recovered"
    except Exception:  # noqa: BLE001 - a page MuPDF cannot even describe is lost too
        return "the page's object cannot be read (damaged PDF); its content could not be recovered"
    return ""


def unreadable_before_text(page: pymupdf.Page, limits, *, streams_checked: bool = False) -> str:
    """Why a page cannot be read, found before its text is extracted or it is rendered, or '':
    its object lost from a truncated file, a page box or content streams past `limits`
    (`config.limits`; `streams_checked`: the content-size check already passed, in the
    pre-scan). `convert` (pipeline.py) and `pagerouter triage` (cli.py) both ask this, so the
    two say `failed` for the same pages."""
    from ..intake.page_limits import content_size_problem, page_box_problem

    return (_lost_page(page) or page_box_problem(page.rect.width, page.rect.height, limits.max_page_side_pt)
            or ("" if streams_checked else content_size_problem(page, limits.max_content_stream_mb)))


def damage_found(page: pymupdf.Page, warnings: str) -> str:
    """Why a page read from a damaged file may miss content (`warnings`: MuPDF's, from opening
    the file and reading the page), or ''; a repaired file's pages are checked for content
    streams missing from it."""
    damaged = _damage_report(warnings)
    if not damaged and getattr(page.parent, "is_repaired", True):
        damaged = _lost_contents(page)
    return damaged


def _lost_contents(page: pymupdf.Page) -> str:
    """Why part of a PDF page's content is missing from the file (a content stream cut off), or ''."""
    doc = page.parent
    try:
        n = doc.xref_length() if doc.is_pdf else 0
        gone = [x for x in page.get_contents() if not (0 < x < n and doc.xref_is_stream(x))] if n else []
    except Exception:  # noqa: BLE001
        return "PDF damaged, content may be missing (its content streams cannot be listed)"
    if gone:
        return f"PDF damaged, content may be missing ({len(gone)} of the page's content streams are missing from the file)"
    return ""


def failed_page(source: str, number: int, stage: str, exc: BaseException, decision: TriageDecision | None = None) -> Page:
    msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return Page(
        number=number,
        status="failed",
        route=decision.route if decision else None,
        triage=decision,
        error=f"{source}: page {number}: {stage} failed: {msg[:300]}",
    )


def ocr_mode_decision(decision: TriageDecision, mode: str) -> TriageDecision:
    """Triage's decision under the request's `ocr` option: `force` sends every page to OCR
    (whole page, text layer unused); `auto` and `off` keep triage's route (`off` is applied
    after the text layer is read)."""
    if mode != "force" or decision.route == "ocr":
        return decision
    why = f"ocr=force requested: read by OCR although triage chose route {decision.route}"
    return decision.model_copy(update={
        "route": "ocr", "ocr_regions": [], "hidden_layer": False, "reasons": [*decision.reasons, why],
    })


def ocr_off(page: Page, source: str, route: str) -> Page:
    """A page that needs OCR in a request with ocr=off: flagged `ocr_off`, with its text layer."""
    page.status = "flagged"
    page.flags.append("ocr_off")
    what = "its pictures hold text the text layer lacks" if route == "mixed" else "its text layer is missing or unusable"
    page.checks.append(CheckResult(
        name="ocr_off", passed=False,
        reason=f"{source}: page {page.number}: needs OCR ({what}) but the request set ocr=off; "
        f"only its text layer is returned ({len(page.blocks)} blocks)",
    ))
    return page


def needs_ocr(page: Page, why: str) -> Page:
    """Mark a page that needs OCR we could not run: flagged, never silently empty."""
    page.status = "flagged"
    page.flags.append("needs_ocr")
    page.checks.append(CheckResult(name="needs_ocr", passed=False, reason=why))
    return page
