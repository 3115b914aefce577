"""One page as the review shows it: a compact, JSON-ready record of what the page's card needs.

Only what is shown travels (a figure's base64 crop does not), under short fixed keys, so a
1,000-page run stays a few MB. Every string in it came from the PDF or from our own reasons and
is treated as untrusted text by the page's script (set with textContent, never parsed as HTML).
"""

from __future__ import annotations

from ..config.output import OutputConfig
from ..model import FURNITURE_ROLES, Page
from ..render.output import page_markdown

# Checks whose `regions` mark ink no block accounts for: drawn as outlined boxes.
INK_CHECKS = frozenset({"unread_ink"})


def _box(bbox) -> list[float]:
    return [round(float(v), 2) for v in bbox]


def page_record(doc_index: int, page: Page, output_cfg: OutputConfig, image: str | None) -> dict:
    """The card of one page: status, route, flags, blocks with boxes, Markdown, triage, checks,
    ladder rungs, hidden text and uncovered ink; `image` is its picture's URL (or None)."""
    triage = page.triage
    return {
        "d": doc_index,
        "n": page.number,
        "status": page.status,
        "route": page.route or "failed",
        "flags": list(page.flags),
        "w": page.width,
        "h": page.height,
        "rotation": page.rotation,
        "error": page.error,
        "seconds": round(sum(page.timings.values()), 4),
        "timings": {k: round(v, 4) for k, v in page.timings.items()},
        "image": image,
        "engines": sorted({b.engine for b in page.blocks}),
        "blocks": [
            {
                "text": b.text,
                "role": b.role,
                "bbox": _box(b.bbox),
                "engine": b.engine,
                "engine_version": b.engine_version,
                "route": b.route,
                "confidence": round(b.confidence, 4),
                "order": b.order,
                "furniture": b.role in FURNITURE_ROLES,
                "furniture_reasons": list(b.furniture.reasons) if b.furniture else [],
                "witnesses": list(b.witnesses),
            }
            for b in page.blocks
        ],
        "markdown": page_markdown(page, output_cfg),
        "triage": None if triage is None else {
            "route": triage.route,
            "script": triage.script,
            "scores": {k: round(v, 4) for k, v in triage.scores.items()},
            "reasons": list(triage.reasons),
            "ocr_regions": [_box(r) for r in triage.ocr_regions],
        },
        "hidden": [{"bbox": _box(h.bbox), "text": h.text, "reason": h.reason}
                   for h in (triage.hidden_text if triage else [])],
        "checks": [
            {"name": c.name, "passed": c.passed, "score": round(c.score, 4), "threshold": c.threshold,
             "reason": c.reason}
            for c in page.checks
        ],
        "ink": [_box(r) for c in page.checks if c.name in INK_CHECKS for r in c.regions],
        "attempts": [
            {"tier": a.tier, "engine": a.engine, "number": a.number, "region": a.region,
             "temperature": a.temperature, "rotation": a.rotation, "finish_reason": a.finish_reason,
             "seconds": round(a.seconds, 3), "accepted": a.accepted, "rejected_because": list(a.rejected_because)}
            for a in page.attempts
        ],
    }
