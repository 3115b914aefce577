from pydantic import Field

from .base import StrictModel


class ChecksConfig(StrictModel):
    """Thresholds of the checks that flag a reading (owned by pagerouter.ocr.checks)."""

    min_mean_confidence: float = Field(default=0.80, description="Flag a reading whose mean line confidence is below this.")


class EscalationConfig(StrictModel):
    """Which engines re-read flagged pages on a CPU-only install, and how they vote."""

    enabled: bool = Field(default=True, description="Re-read flagged pages; if false they stay flagged as read.")
