"""Per-page triage: which reader a page needs, with the evidence.

    from pagerouter.triage import triage_page
    decision = triage_page(page, extract_textdict(page), cfg.triage)

See `decide.py` for the design. Which script a page is in is decided by
`pagerouter.common.unicode_scripts.dominant_script`, shared with the OCR route.
"""

from ..model import TriageDecision
from .decide import triage_page

__all__ = ["triage_page", "TriageDecision"]
