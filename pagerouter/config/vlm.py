"""Configuration of the VLM tiers: the engine (vLLM in the replica, or an OpenAI-compatible
server elsewhere), the model profile, and the retry ladder (owned by pagerouter.vlm).

The same `VlmTierConfig` shape serves both tiers: `ocr.small_reader.vlm` (a region model,
PaddleOCR-VL-class) and `ocr.escalation.vlm` (a page model, olmOCR- or LightOnOCR-class).

Token limits are checked twice: here, when both numbers are in the config (max_new_tokens +
prompt_budget_tokens <= max_model_len), and when the engine starts, against the model's own
config.json (pagerouter.vlm.model_limits), which also fills in what the config leaves null.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from .base import StrictModel

DEFAULT_TEMPERATURES = [0.1, 0.1, 0.2, 0.3, 0.5, 0.8, 0.9, 1.0]

DEFAULT_LEAK_PATTERNS = [
    # chat-template and special tokens that should never reach the text
    r"<\|(?:im_start|im_end|endoftext|vision_start|vision_end|image_pad|video_pad|box_start|box_end)\|>",
    r"\[/?INST\]",
    # status and refusal text a model emits instead of the page: only at the very start of the
    # answer (after any front matter), since a page may itself say "I cannot attend ..."
    r"(?is)\A\s*(?:---.*?---\s*)?(?:I'?m sorry|As an AI|Unfortunately,? I|(?:I cannot|I can'?t|I am unable to|I'm unable to) "
    r"(?:transcribe|read|process|see|help|assist|provide|extract|view|access))\b",
    r"(?is)\A\s*(?:---.*?---\s*)?(?:Here is|Here's|Below is) (?:the )?(?:text(?! of)|transcription|content|markdown|OCR)\b",
    r"(?i)\A\s*(?:Processing|Loading|Generating|Thinking)\.\.\.",
]


class VlmEngineConfig(StrictModel):
    """One VLM engine: `vllm` runs vLLM inside this process (the Serve replica, or the CLI);
    `openai_server` talks to an OpenAI-compatible vLLM server running elsewhere."""

    kind: Literal["vllm", "openai_server"] = Field(default="vllm", description="Engine kind.")
    model: str = Field(
        default="",
        description="Model directory or hub name (vLLM loads it; for a server: its model id). A relative directory "
        "that exists is made absolute when the config is loaded, so Serve replicas find it from any working directory.",
    )
    served_model_name: str | None = Field(
        default=None, description="Model name the OpenAI server knows the model by (default: `model`)."
    )
    revision: str | None = Field(default=None, description="Model revision (hub models only).")
    dtype: Literal["auto", "float32", "float16", "bfloat16"] = Field(default="auto", description="Weights/activations dtype.")
    quantization: str | None = Field(default=None, description="vLLM quantization, e.g. `fp8` for the large tier on a GPU.")
    max_model_len: int | None = Field(
        default=8192, ge=256,
        description="Context length (prompt + output tokens) per request; null = the model's own maximum "
        "(max_position_embeddings in its config.json). Checked against that maximum when the engine starts.",
    )
    gpu_memory_utilization: float = Field(
        default=0.85, gt=0, le=1, description="Share of GPU memory vLLM may take (weights + KV cache), GPU builds only."
    )
    cpu_kv_cache_gib: float | None = Field(
        default=None, gt=0,
        description="KV-cache size in GiB on the CPU build (VLLM_CPU_KVCACHE_SPACE); without it vLLM wants ~90% of RAM.",
    )
    max_num_seqs: int | None = Field(default=None, ge=1, description="Most sequences vLLM batches in one step (default: vLLM's).")
    enforce_eager: bool = Field(
        default=False, description="Skip CUDA graphs / torch.compile (faster start; on CPU compile start measured 76 s)."
    )
    images_per_prompt: int = Field(default=1, ge=1, description="Images vLLM accepts per prompt (limit_mm_per_prompt).")
    trust_remote_code: bool = Field(default=False, description="Allow model code from the model directory.")
    seed: int = Field(default=0, description="Engine random seed.")
    engine_kwargs: dict[str, Any] = Field(
        default_factory=dict, description="Further vLLM engine arguments, passed through as given."
    )
    # -- openai_server ----------------------------------------------------------------------
    base_url: str | None = Field(default=None, description="OpenAI server root, e.g. http://vlm:8000/v1 (openai_server).")
    api_key_env: str = Field(
        default="PAGEROUTER_VLM_API_KEY", description="Environment variable holding the server's API key (never the key)."
    )
    timeout_s: float = Field(default=300.0, gt=0, description="Seconds one server request may take.")
    connect_timeout_s: float = Field(default=10.0, gt=0, description="Seconds to open a connection to the server.")
    max_connections: int = Field(default=64, ge=1, description="Concurrent connections to the server at most.")

    @field_validator("model")
    @classmethod
    def _absolute_dir(cls, v: str) -> str:
        p = Path(v).expanduser() if v else None
        return str(p.resolve()) if p is not None and not p.is_absolute() and p.is_dir() else v

    @model_validator(mode="after")
    def _kind_needs(self):
        if self.kind == "openai_server" and not self.base_url:
            raise ValueError("engine kind openai_server needs base_url (e.g. http://host:8000/v1)")
        return self

    def model_name(self) -> str:
        return self.served_model_name or self.model


class LadderConfig(StrictModel):
    """olmOCR's retry ladder: attempts on rising temperatures until one passes every check."""

    max_attempts: int = Field(default=8, ge=1, le=32, description="Attempts per page (or region) at most.")
    temperatures: list[float] = Field(
        default_factory=lambda: list(DEFAULT_TEMPERATURES),
        min_length=1,
        description="Temperature of attempt i (the last repeats when there are more attempts than entries).",
    )
    rotation_feedback: bool = Field(
        default=True,
        description="When the model says the page is not upright, re-render it rotated by its correction (cumulative).",
    )
    max_seconds: float | None = Field(
        default=None, gt=0, description="Stop starting new attempts after this many seconds on one page (null: no limit)."
    )

    def temperature(self, attempt: int) -> float:
        """Temperature of 0-based attempt `attempt`."""
        return self.temperatures[min(attempt, len(self.temperatures) - 1)]


class VlmTierConfig(StrictModel):
    """A VLM tier: engine, profile, output budget, ladder and what counts as a bad output."""

    engine: VlmEngineConfig = Field(default_factory=VlmEngineConfig, description="The engine behind this tier.")
    profile: Literal["paddleocr_vl", "olmocr", "lightonocr"] = Field(
        default="olmocr",
        description="`paddleocr_vl`: one layout region per prompt (text, table or formula by region kind); "
        "`olmocr`: the whole page per prompt, YAML front matter then Markdown; `lightonocr`: the whole page "
        "as the only input (no text prompt, no anchor), plain Markdown back (LightOnOCR-2-class models).",
    )
    render_engine: str | None = Field(
        default=None, description="Key in `ocr.render_targets` for the image size (default: the profile's name)."
    )
    max_new_tokens: int | None = Field(
        default=4096, ge=1,
        description="Output tokens per request at most; null = what the context leaves: engine.max_model_len - "
        "prompt_budget_tokens (resolved when the engine starts).",
    )
    prompt_budget_tokens: int | None = Field(
        default=None, ge=1,
        description="Tokens a prompt may take (image tokens + instruction + anchor text); max_new_tokens + this must "
        "fit in engine.max_model_len. null = measured when the engine starts, with the model's own processor on a "
        "blank page at the tier's render size plus a full anchor.",
    )
    top_p: float = Field(default=1.0, gt=0, le=1, description="Nucleus sampling cut-off.")
    prompt: str | None = Field(
        default=None,
        description="Page profile: replaces the built-in prompt (e.g. the exact prompt a fine-tuned model was trained "
        "on); `{anchor}` in it is replaced by the anchor text (empty when there is none).",
    )
    anchor_text: bool = Field(
        default=True,
        description="Page profile: put the page's text-layer blocks with coordinates in the prompt as an anchor.",
    )
    anchor_max_chars: int = Field(default=6000, ge=0, description="Longest anchor text in the prompt.")
    ladder: LadderConfig = Field(default_factory=LadderConfig, description="Retries per page (region).")
    leak_patterns: list[str] = Field(
        default_factory=lambda: list(DEFAULT_LEAK_PATTERNS),
        description="Regular expressions of status/stop text that must not appear in an output (leaked text).",
    )
    min_confidence: float = Field(
        default=0.0, ge=0, le=1,
        description="Reject an output whose exp(mean token log-probability) is below this (0 = off).",
    )
    # -- tail loop (pagerouter.vlm.detectors) ------------------------------------------------
    # A model that degenerates repeats its last n-gram (or line) until it stops or hits
    # max_new_tokens; legit repetition (column headers, short list items) is rarely this long.
    tail_loop_max_period: int = Field(
        default=30, ge=1, le=200,
        description="Longest repeated unit, in tokens, looked for at the end of an output (tail loop).",
    )
    tail_loop_min_repeats: int = Field(
        default=8, ge=2,
        description="A tail loop is this many back-to-back copies (or more) of one unit or one line at the end of the output...",
    )
    tail_loop_min_chars: int = Field(
        default=60, ge=1, description="...whose copies hold at least this many letters/digits together..."
    )
    tail_loop_min_unit_words: int = Field(
        default=2, ge=1,
        description="...and whose unit holds at least this many distinct word tokens (2+ letters/digits, or a CJK "
        "character): one repeated cell like `| 0.00` is a table, and single-token loops are `repetition_token`'s.",
    )
    region_pad_px: int = Field(default=4, ge=0, description="Region profile: pixels of margin around a region crop.")
    min_region_px: int = Field(default=8, ge=1, description="Region profile: regions thinner than this are skipped.")

    @field_validator("leak_patterns")
    @classmethod
    def _patterns_compile(cls, v: list[str]) -> list[str]:
        # A typo in a pattern should fail at config load, not on the first page.
        for p in v:
            try:
                re.compile(p)
            except re.error as exc:
                raise ValueError(f"leak pattern {p!r} is not a valid regular expression: {exc}") from exc
        return v

    @model_validator(mode="after")
    def _tokens_fit(self):
        # The numbers the config states must fit together; what it leaves null is derived from the
        # model (and checked the same way) when the engine starts.
        ctx, out, budget = self.engine.max_model_len, self.max_new_tokens, self.prompt_budget_tokens
        if ctx is not None and out is not None and out + (budget or 0) > ctx:
            what = f"max_new_tokens {out} + prompt_budget_tokens {budget} = {out + budget}" if budget else \
                f"max_new_tokens {out}"
            raise ValueError(f"{what} does not fit in engine.max_model_len {ctx}: lower max_new_tokens "
                             "(or leave it null to take what the context leaves) or raise max_model_len")
        return self

    def render_key(self) -> str:
        return self.render_engine or self.profile
