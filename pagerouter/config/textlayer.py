from pydantic import Field

from .base import StrictModel


class TextLayerConfig(StrictModel):
    """Knobs for reading a good text layer with layout (owned by pagerouter.textlayer)."""

    detect_tables: bool = Field(default=True, description="Look for tables where drawings/geometry suggest one.")
