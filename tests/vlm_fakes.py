"""Test doubles for the VLM tiers: a scripted FAKE engine and realistic failure outputs.

`ScriptedFakeVlmEngine` is not a model: it replays a script of outputs, one per `generate`
call, and records what it was asked. The builders below produce the kinds of output real VLMs
give when they fail (loops to the token limit, refusals, leaked chat tokens, cut-off text,
olmOCR front matter asking for a rotation, nothing, invented text), so the ladder and the
detectors are tested against realistic text rather than toy strings.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from pagerouter.vlm.base import FinishReason, Generation, VlmRequest

PARAGRAPH = (
    "The committee met on 14 March to review the quarterly figures. Operating costs fell by "
    "4.2 percent compared with the previous quarter, mainly because of lower energy prices and "
    "the consolidation of two regional warehouses. Revenue from the service division grew "
    "steadily, while hardware sales remained flat. The board approved the revised budget for "
    "the coming year and asked the finance team to report again in June."
)

LOOPED_SENTENCE = (
    "The results of the survey are summarised in the table below and discussed in the "
    "following section of this report."
)  # 20 tokens: longer than check_text's longest phrase (16), so only the tail check sees it


@dataclass
class ScriptedOutput:
    """One scripted reply: what `generate` returns (or raises) for one call."""

    text: str = ""
    finish_reason: FinishReason = "stop"
    completion_tokens: int | None = None  # default: whitespace tokens of `text`
    prompt_tokens: int = 1200  # a page image plus prompt is about this many tokens
    mean_logprob: float | None = None
    error: str | None = None
    raises: Exception | None = None  # raise this from generate instead of returning
    seconds: float = 1.0  # advanced on the fake clock per call


@dataclass
class RecordedRequest:
    """What the fake engine was asked (for assertions)."""

    temperature: float
    max_tokens: int
    prompt: str
    image_shape: tuple[int, ...] | None
    image: np.ndarray | None


class FakeClock:
    """A monotonic clock tests move by hand (and the fake engine moves per call)."""

    def __init__(self, start: float = 100.0):
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class ScriptedFakeVlmEngine:
    """FAKE VlmEngine: replays `script` one output per generate call; records requests."""

    name = "scripted-fake"
    version = "scripted-fake 0 / no model"

    def __init__(self, script: list[ScriptedOutput], clock: FakeClock | None = None):
        self.script = list(script)
        self.clock = clock
        self.requests: list[RecordedRequest] = []
        self.closed = False

    def generate(self, requests: list[VlmRequest]) -> list[Generation]:
        out = []
        for req in requests:
            self.requests.append(RecordedRequest(
                temperature=req.temperature, max_tokens=req.max_tokens, prompt=req.prompt,
                image_shape=None if req.image is None else tuple(req.image.shape),
                image=None if req.image is None else req.image.copy(),
            ))
            if not self.script:
                raise AssertionError(f"fake engine script exhausted after {len(self.requests) - 1} calls")
            s = self.script.pop(0)
            if self.clock is not None:
                self.clock.advance(s.seconds)
            if s.raises is not None:
                raise s.raises
            n = s.completion_tokens if s.completion_tokens is not None else len(s.text.split())
            out.append(Generation(
                text=s.text, finish_reason=s.finish_reason, prompt_tokens=s.prompt_tokens,
                completion_tokens=n, seconds=s.seconds, mean_logprob=s.mean_logprob, error=s.error,
                max_tokens=req.max_tokens,
            ))
        return out

    def stream(self, request: VlmRequest) -> Iterator[str]:
        (gen,) = self.generate([request])
        yield from gen.text.split(" ")

    def stats(self) -> dict:
        return {"requests": len(self.requests), "script_left": len(self.script)}

    def close(self) -> None:
        self.closed = True


class RecordingFakeWitness:
    """FAKE third engine for the page escalator's vote: records each call and reads nothing
    (raises), so a test sees whether the escalator asked for a witness at all."""

    def __init__(self):
        self.calls: list[int] = []

    def escalate(self, task, first):
        self.calls.append(task.number)
        raise RuntimeError("RecordingFakeWitness reads nothing")


# -- realistic outputs -------------------------------------------------------------------------


def front_matter(rotation_valid: bool = True, correction: int = 0, *, table: bool = False) -> str:
    """olmOCR's YAML front matter (the page profile's parser lives elsewhere)."""
    return (
        "---\nprimary_language: en\n"
        f"is_rotation_valid: {'true' if rotation_valid else 'false'}\n"
        f"rotation_correction: {correction}\n"
        f"is_table: {'true' if table else 'false'}\nis_diagram: false\n---\n"
    )


def good_page() -> ScriptedOutput:
    body = (
        "# Quarterly review\n\n" + PARAGRAPH + "\n\n| Quarter | Revenue | Costs |\n|---|---|---|\n"
        "| Q1 | 1,204 | 981 |\n| Q2 | 1,317 | 1,002 |\n| Q3 | 1,296 | 958 |\n"
    )
    return ScriptedOutput(front_matter() + body)


def loop_to_limit(max_tokens: int = 600, finish: FinishReason = "length") -> ScriptedOutput:
    """A real paragraph, then one sentence repeated until the token budget ran out (mid-word)."""
    text = front_matter() + PARAGRAPH + "\n\n"
    while len(text.split()) < max_tokens:
        text += LOOPED_SENTENCE + " "
    words = text.split(" ")[:max_tokens]
    words[-1] = words[-1][: max(1, len(words[-1]) // 2)]  # cut inside a word, as max_tokens does
    text = " ".join(words)
    return ScriptedOutput(text, finish_reason=finish, completion_tokens=max_tokens)


def degenerate_phrase(max_tokens: int = 600) -> ScriptedOutput:
    """A model that falls into "the table the table the table ..." after a sentence."""
    text = front_matter() + PARAGRAPH + " As shown in " + "the table " * (max_tokens // 2)
    return ScriptedOutput(text.rstrip(), finish_reason="length", completion_tokens=max_tokens)


def repeated_table_row(copies: int = 40) -> ScriptedOutput:
    """A Markdown table whose last row is repeated until the model stopped."""
    head = "| Region | 2021 | 2022 | Change |\n|---|---|---|---|\n| North | 412 | 455 | +10.4% |\n"
    return ScriptedOutput(front_matter(table=True) + head + "| South | 380 | 391 | +2.9% |\n" * copies)


def refusal() -> ScriptedOutput:
    return ScriptedOutput(
        "I'm sorry, but I can't transcribe this document because the image is too blurry to read reliably."
    )


def leaked_im_end() -> ScriptedOutput:
    """The page text, the chat template's end token, and the model carrying on."""
    return ScriptedOutput(front_matter() + PARAGRAPH + "<|im_end|>\n<|im_start|>assistant\n" + PARAGRAPH)


def truncated(max_tokens: int = 60) -> ScriptedOutput:
    """A page cut off mid-sentence by the token limit."""
    text = front_matter() + " ".join((PARAGRAPH + " " + PARAGRAPH).split()[: max_tokens])
    return ScriptedOutput(text, finish_reason="length", completion_tokens=max_tokens)


def wrong_rotation(correction: int = 90) -> ScriptedOutput:
    """olmOCR on a sideways page: says so in the front matter and reads a few fragments."""
    return ScriptedOutput(front_matter(False, correction) + "Q3 1,296\n\nrevenue 958 costs\n")


def empty() -> ScriptedOutput:
    return ScriptedOutput(front_matter(), completion_tokens=32)


def blank_page_invention() -> ScriptedOutput:
    """What a model writes when shown an empty page: a plausible page that is not there."""
    return ScriptedOutput(front_matter() + "# Introduction\n\n" + PARAGRAPH)


def engine_failure(message: str = "CUDA out of memory. Tried to allocate 2.00 GiB") -> ScriptedOutput:
    return ScriptedOutput(raises=RuntimeError(message))


# -- a page image the tests can rotate -----------------------------------------------------


def page_image(height: int = 40, width: int = 30) -> np.ndarray:
    """A portrait RGB page with a marker pixel in its top-left corner (to see rotations)."""
    img = np.full((height, width, 3), 255, dtype=np.uint8)
    img[0, 0] = (255, 0, 0)
    return img


def marker_corner(img: np.ndarray) -> str:
    """Which corner holds the red marker: `tl`, `tr`, `br` or `bl`."""
    h, w = img.shape[:2]
    for name, (y, x) in {"tl": (0, 0), "tr": (0, w - 1), "br": (h - 1, w - 1), "bl": (h - 1, 0)}.items():
        if tuple(img[y, x]) == (255, 0, 0):
            return name
    raise AssertionError("marker not found")


def request_builder(img: np.ndarray, max_tokens: int = 600) -> Callable[[float, int], VlmRequest]:
    """build_request as a caller would write it: re-render (here: rotate) the page clockwise."""

    def build(temperature: float, rotation: int) -> VlmRequest:
        rotated = np.ascontiguousarray(np.rot90(img, k=-(rotation // 90)))  # k<0: clockwise
        return VlmRequest(prompt="Read this page.", image=rotated, max_tokens=max_tokens, temperature=temperature)

    return build



class PromptRoutedFakeVlmEngine:
    """FAKE VlmEngine whose answer depends on the prompt (for per-region readers, whose requests
    arrive concurrently in no fixed order): `answers` maps a prompt prefix to a list of outputs
    replayed in turn for that prefix (the last one repeats)."""

    name = "routed-fake"
    version = "routed-fake 0 / no model"

    def __init__(self, answers: dict[str, list[ScriptedOutput]]):
        import threading

        self.answers = {k: list(v) for k, v in answers.items()}
        self.requests: list[RecordedRequest] = []
        self._lock = threading.Lock()

    def generate(self, requests: list[VlmRequest]) -> list[Generation]:
        out = []
        for req in requests:
            with self._lock:
                self.requests.append(RecordedRequest(
                    temperature=req.temperature, max_tokens=req.max_tokens, prompt=req.prompt,
                    image_shape=None if req.image is None else tuple(req.image.shape), image=None))
                key = next((k for k in self.answers if req.prompt.startswith(k)), None)
                if key is None:
                    raise AssertionError(f"no scripted answer for prompt {req.prompt[:40]!r}")
                queue = self.answers[key]
                s = queue.pop(0) if len(queue) > 1 else queue[0]
            n = s.completion_tokens if s.completion_tokens is not None else len(s.text.split())
            out.append(Generation(text=s.text, finish_reason=s.finish_reason, prompt_tokens=s.prompt_tokens,
                                  completion_tokens=n, seconds=s.seconds, mean_logprob=s.mean_logprob, error=s.error))
        return out

    def stream(self, request: VlmRequest) -> Iterator[str]:
        (gen,) = self.generate([request])
        yield from gen.text.split(" ")

    def stats(self) -> dict:
        return {"requests": len(self.requests)}

    def close(self) -> None:
        pass
