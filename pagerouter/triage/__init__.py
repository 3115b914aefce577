"""Per-page triage: which reader a page needs, with the evidence.

    from pagerouter.triage import triage_page
    decision = triage_page(page, extract_textdict(page), cfg.triage)

See `decide.py` for the design; `detect_script` is shared with the OCR stage.
"""

from ..model import TriageDecision
from .decide import triage_page
from .scripts import detect_script

__all__ = ["triage_page", "detect_script", "TriageDecision"]
