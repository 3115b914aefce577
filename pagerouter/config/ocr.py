from pydantic import Field

from .base import StrictModel
from .checks import ChecksConfig, EscalationConfig


class OcrConfig(StrictModel):
    """Rendering, layout, small reader, checks and CPU escalation (owned by pagerouter.ocr)."""

    enabled: bool = Field(default=True, description="Run the OCR path; if false, OCR pages come out `needs_ocr`.")
    checks: ChecksConfig = Field(default_factory=ChecksConfig, description="Checks that flag a reading.")
    escalation: EscalationConfig = Field(default_factory=EscalationConfig, description="Re-reading flagged pages.")
