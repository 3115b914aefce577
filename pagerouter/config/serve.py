from pydantic import Field

from .base import StrictModel


class ServeConfig(StrictModel):
    """Ray Serve deployments and endpoints (owned by graph/ and deployments/)."""

    http_port: int = Field(default=8000, description="HTTP port of the Serve proxy.")
    grpc_port: int = Field(default=9000, description="gRPC port of the Serve proxy.")
    host: str = Field(default="127.0.0.1", description="Address the proxies listen on.")
    escalation_timeout_s: float = Field(
        default=120.0,
        gt=0,
        description="Seconds to wait for the escalation tier before keeping the small reader's reading, flagged.",
    )
    ocr_concurrency: int = Field(
        default=1, ge=1, description="OCR pages of one document in flight at once (in-process: 1 uses both cores already)."
    )
