"""A VLM tier's token limits checked against the model itself, before its engine starts.

vLLM does not refuse `max_tokens` above what the context leaves: a request then stops at
`max_model_len` with finish_reason "length", and every long page looks like a loop. So the
tier's numbers are checked (and what the config leaves null is filled in) from the model's own
files when the reader is built:
- `engine.max_model_len` <= the model's maximum (max_position_embeddings in its config.json);
  null takes that maximum;
- the prompt budget: `prompt_budget_tokens`, or measured with the model's own chat template and
  processor on a blank page at the tier's render size (plus a full anchor for the page profile);
- `max_new_tokens` + budget <= max_model_len; null takes what is left.
A config that does not fit fails here with one line naming the field, the model and the numbers.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from ..config.ocr import OcrConfig
from ..config.vlm import VlmTierConfig

log = logging.getLogger(__name__)

A4_ASPECT = 297 / 210  # the page shape the budget is measured on (portrait A4)
A4_LONG_IN = 297 / 25.4
_MAX_KEYS = ("max_position_embeddings", "max_sequence_length", "seq_length", "n_positions")
MIN_NEW_TOKENS = 16  # a derived output budget below this reads nothing: the context is too small


class VlmLimitError(ValueError):
    """A tier's token limits do not fit its model."""


def model_max_len(model: str) -> tuple[int | None, str]:
    """The longest context the model's config.json declares, and where that was read (None, why
    not) -- for a local model directory; a hub name is not looked up here (vLLM checks it)."""
    path = Path(model) / "config.json"
    if not path.is_file():
        return None, f"{model} is not a local model directory"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return None, f"{path}: {exc}"
    for section in (data.get("text_config") or {}, data.get("llm_config") or {}, data):
        for key in _MAX_KEYS:
            if isinstance(section.get(key), int) and section[key] > 0:
                where = "text_config." if section is not data else ""
                return int(section[key]), f"{where}{key} in {path}"
    return None, f"{path} declares no maximum length ({', '.join(_MAX_KEYS)})"


def render_side_px(cfg: OcrConfig, tier: VlmTierConfig) -> tuple[int, int]:
    """(width, height) of a portrait A4 page rendered at the tier's render target."""
    t = cfg.render_target(tier.render_key())
    long = t.longest_side_px or int(round((t.dpi or 150) * A4_LONG_IN))
    short = int(round(long / A4_ASPECT))
    while long * short > t.max_pixels:  # the render's pixel cap
        long, short = int(long * 0.95), int(short * 0.95)
    return short, long


def measure_prompt_tokens(tier: VlmTierConfig, size: tuple[int, int], region: bool = False) -> int | None:
    """Prompt tokens of the tier's longest prompt on a blank page of `size` (`region`: the region
    reader's task prompts), counted by the model's own processor (None when it cannot be loaded
    here, e.g. a hub name offline)."""
    from .profiles import REGION_TASKS, page_prompt

    e = tier.engine
    if not Path(e.model).is_dir():  # a hub name: not fetched here (no network at config checks)
        return None
    try:
        from PIL import Image
        from transformers import AutoProcessor

        proc = AutoProcessor.from_pretrained(e.model, revision=e.revision, trust_remote_code=e.trust_remote_code)
    except Exception as exc:  # noqa: BLE001 - not measurable here: the config's own numbers stand
        log.debug("no processor for %s: %s", e.model, exc)
        return None
    if region or tier.profile == "paddleocr_vl":
        prompt, anchor = max(REGION_TASKS.values(), key=len), ""
    elif tier.profile == "lightonocr":
        prompt, anchor = "", ""
    else:
        prompt = page_prompt(None, template=tier.prompt)
        # a full anchor: text of anchor_max_chars characters, in the model's own tokens
        anchor = ("[72x101]The quick brown fox jumps over 13 lazy dogs. " * 200)[: tier.anchor_max_chars]
        anchor = "" if not tier.anchor_text else "\n" + anchor
    content: list[dict] = [{"type": "image"}]
    if prompt:
        content.append({"type": "text", "text": prompt + anchor})
    try:
        text = proc.apply_chat_template([{"role": "user", "content": content}], tokenize=False,
                                        add_generation_prompt=True)
        out = proc(text=[text], images=[Image.new("RGB", size, "white")])
        return len(out["input_ids"][0])
    except Exception as exc:  # noqa: BLE001
        log.debug("could not measure the prompt of %s: %s", e.model, exc)
        return None


def resolve_limits(cfg: OcrConfig, tier: VlmTierConfig, where: str, region: bool = False) -> VlmTierConfig:
    """`tier` with max_model_len, prompt_budget_tokens and max_new_tokens filled in and checked
    against the model; raises VlmLimitError (one line, naming `where`.<field>) when they do not fit.
    `region`: the tier is the region reader (its prompts are the region tasks, whatever the profile)."""
    e = tier.engine
    model_max, source = model_max_len(e.model)
    ctx = e.max_model_len
    if ctx is None:
        if model_max is None:
            raise VlmLimitError(f"{where}.engine.max_model_len is null but the model's maximum is unknown "
                                f"({source}): set max_model_len")
        ctx = model_max
    elif model_max is not None and ctx > model_max:
        raise VlmLimitError(f"{where}.engine.max_model_len {ctx} is above the model's own maximum {model_max} "
                            f"({source}): set {model_max} or less, or null to take the model's")
    budget = tier.prompt_budget_tokens
    measured = ""
    if budget is None:
        budget = measure_prompt_tokens(tier, render_side_px(cfg, tier), region)
        measured = " (measured on a blank page at the render size)" if budget is not None else ""
    out = tier.max_new_tokens
    if out is None:
        if budget is None:
            raise VlmLimitError(f"{where}.max_new_tokens is null and the prompt budget could not be measured "
                                f"for {e.model}: set max_new_tokens or prompt_budget_tokens")
        out = ctx - budget
        if out < MIN_NEW_TOKENS:
            raise VlmLimitError(f"{where}: a prompt of {budget} tokens{measured} leaves {out} of max_model_len "
                                f"{ctx} for output: raise max_model_len or lower the render size")
    elif out + (budget or 0) > ctx:
        raise VlmLimitError(f"{where}.max_new_tokens {out} + a prompt of {budget} tokens{measured} = "
                            f"{out + (budget or 0)} does not fit in max_model_len {ctx}: lower max_new_tokens "
                            "(or null to take what the context leaves) or raise max_model_len")
    log.info("%s: max_model_len %d (model maximum %s), prompt %s tokens%s, max_new_tokens %d",
             where, ctx, model_max, budget, measured, out)
    return tier.model_copy(update={
        "engine": e.model_copy(update={"max_model_len": ctx}),
        "prompt_budget_tokens": budget, "max_new_tokens": out,
    })
