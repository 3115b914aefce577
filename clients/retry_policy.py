"""How long a client keeps asking a busy server: the settings of clients/retry.py, apart from it so
a command can offer them as flags without importing the retry machinery (tenacity) before it runs."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class RetryPolicy(BaseModel):
    """How long a client keeps asking a busy server (429/503, UNAVAILABLE/RESOURCE_EXHAUSTED + retry-after)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_attempts: int = Field(default=8, ge=1, description="Attempts of one call in all (1 = never retry).")
    deadline_s: float = Field(
        default=300.0, gt=0,
        description="Seconds from the first attempt after which no attempt starts; a server hint that would "
        "end past it gives up at once.",
    )
    backoff_s: float = Field(default=0.5, gt=0, description="First wait when the server gave no hint; doubles each time.")
    max_backoff_s: float = Field(default=30.0, gt=0, description="Longest wait when the server gave no hint.")
