from pydantic import Field

from .base import StrictModel


class TriageConfig(StrictModel):
    """Thresholds for the per-page route decision (owned by pagerouter.triage)."""

    min_chars_for_text_layer: int = Field(default=20, description="Fewer text-layer characters than this is no text layer.")
