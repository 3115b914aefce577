from pydantic import Field

from .base import StrictModel


class OutputConfig(StrictModel):
    page_markers: bool = Field(default=False, description="Put `<!-- page N -->` markers between pages in Markdown.")
    page_separator: str = Field(default="\n\n---\n\n", description="Text between pages in Markdown.")
    include_furniture: bool = Field(
        default=False, description="Render headers, footers and page numbers in Markdown (always kept in JSON)."
    )
