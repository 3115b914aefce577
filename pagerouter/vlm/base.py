"""What every VLM engine takes and returns, and the small Protocol it implements.

An engine is called from worker threads (the stage Protocols are synchronous) and must be
thread-safe: `generate` submits all its requests at once and returns when all are done, so
concurrent callers (regions of one page, pages of several requests) all reach the engine
together and vLLM's continuous batching sees them as one stream of work. One failed request
never raises: it comes back as a `Generation` with finish_reason "error".
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

import numpy as np

FinishReason = Literal["stop", "length", "error", "abort"]


@dataclass
class VlmRequest:
    """One prompt with one image (RGB uint8, already at the profile's render size)."""

    prompt: str  # the user turn's text; the engine applies the model's chat template
    image: np.ndarray | None
    max_tokens: int
    temperature: float = 0.0
    top_p: float = 1.0
    stop: list[str] = field(default_factory=list)
    logprobs: bool = True  # ask for the sampled tokens' log-probabilities (confidence)
    seed: int | None = None


@dataclass
class Generation:
    """What the engine returned for one request."""

    text: str
    finish_reason: FinishReason
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    mean_logprob: float | None = None  # mean log-probability of the generated tokens
    error: str | None = None  # set when finish_reason == "error"
    # The limits this generation ran under, so a "length" stop can name the one it hit.
    max_tokens: int | None = None  # the request's output limit
    context_len: int | None = None  # the engine's max_model_len (prompt + output tokens), when known

    @property
    def confidence(self) -> float | None:
        """exp(mean token log-probability): the model's own certainty, 0..1 (None if unknown)."""
        if self.mean_logprob is None:
            return None
        import math

        return float(min(1.0, max(0.0, math.exp(self.mean_logprob))))


@runtime_checkable
class VlmEngine(Protocol):
    name: str  # engine name for provenance, e.g. `vllm`
    version: str  # engine and model, e.g. `vllm 0.32.0 / tiny-qwen2vl`

    def generate(self, requests: list[VlmRequest]) -> list[Generation]:
        """Run all requests concurrently; one Generation per request, in order."""
        ...

    def stream(self, request: VlmRequest) -> Iterator[str]:
        """Text pieces of one request as they are generated."""
        ...

    def stats(self) -> dict:
        """Engine-side figures (e.g. `batch_sizes`: {running requests per step: steps})."""
        ...

    def close(self) -> None:
        """Stop the engine and free its memory."""
        ...


def to_pil(image: np.ndarray):
    """A PIL image of an RGB uint8 array (what vLLM's multimodal input takes)."""
    from PIL import Image

    return Image.fromarray(np.ascontiguousarray(image))


def png_bytes(image: np.ndarray) -> bytes:
    """PNG encoding of an RGB image (for engines that send images over the wire)."""
    import io

    buf = io.BytesIO()
    to_pil(image).save(buf, format="PNG")
    return buf.getvalue()
