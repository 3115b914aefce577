from pydantic import Field

from .base import StrictModel


class OcrConfig(StrictModel):
    """Rendering, layout, small reader, checks and CPU escalation (owned by pagerouter.ocr)."""

    enabled: bool = Field(default=True, description="Run the OCR path; if false, OCR pages come out `needs_ocr`.")
