"""Build a tiny Qwen2-VL locally: the model the README's "Try the VLM tiers on a CPU" steps and
the tests run under vLLM.

    python scripts/build_tiny_vlm.py models/tiny-qwen2vl     # ~10 s, 1.3 MB, downloads nothing

It is the real Qwen2-VL architecture (transformers' ``Qwen2VLForConditionalGeneration``) at toy
sizes with random, seeded weights: about 0.64M parameters, ~1.3 MB on disk, built in seconds,
downloading nothing. vLLM and transformers both load it. It reads nothing -- its text is garbage --
but it proves the plumbing: image preprocessing, the chat template, batching, max_tokens and
finish_reason "length", stop strings, streaming, per-prompt image limits.

Needs the vlm-cpu extra (torch, transformers, tokenizers, torchvision for the image processor).

Shapes that matter:
- text head_dim 32 (hidden 128 / 4 heads): vLLM's CPU attention supports 32/64/80/...;
  mrope_section [4, 6, 6] sums to head_dim / 2, as M-RoPE requires.
- vocab size = the tokenizer's exact length: padded embedding rows would let a random model emit
  ids the tokenizer cannot decode.
- processor max_pixels 224*224 keeps an image to at most 64 tokens after the 2x2 merge.
"""

from __future__ import annotations

from pathlib import Path

# The Qwen2-VL special tokens, in their usual order.
SPECIAL_TOKENS = [
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|object_ref_start|>",
    "<|object_ref_end|>",
    "<|box_start|>",
    "<|box_end|>",
    "<|quad_start|>",
    "<|quad_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|vision_pad|>",
    "<|image_pad|>",
    "<|video_pad|>",
]

# Qwen2-VL style: content is a string or a list of parts; each image part becomes one
# <|vision_start|><|image_pad|><|vision_end|> (the processor expands the pad per image patch).
CHAT_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for c in message['content'] %}"
    "{% if c['type'] == 'image' or c['type'] == 'image_url' %}"
    "<|vision_start|><|image_pad|><|vision_end|>"
    "{% elif c['type'] == 'text' %}{{ c['text'] }}{% endif %}"
    "{% endfor %}{% endif %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)

# What the BPE merges are learnt from: page-ish text and the front matter our VLM prompt asks for.
_CORPUS = [
    "The quick brown fox jumps over the lazy dog. Invoice 4711 total due 1,250.00 EUR."
] * 50 + [
    "primary_language: en\nis_rotation_valid: true\nrotation_correction: 0\n"
    "is_table: false\nis_diagram: false\n---\n"
] * 20

BPE_VOCAB_SIZE = 600
MIN_PIXELS = 28 * 28
MAX_PIXELS = 224 * 224


def _build_tokenizer():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=BPE_VOCAB_SIZE,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(_CORPUS, trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token=None,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        additional_special_tokens=SPECIAL_TOKENS[1:],
    )
    fast.chat_template = CHAT_TEMPLATE
    return fast


def _build_config(tokenizer):
    from transformers import Qwen2VLConfig

    ids = tokenizer.convert_tokens_to_ids
    vocab = len(tokenizer)
    pad, eos = ids("<|endoftext|>"), ids("<|im_end|>")
    return Qwen2VLConfig(
        text_config=dict(
            vocab_size=vocab,
            hidden_size=128,
            intermediate_size=256,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
            bos_token_id=pad,
            eos_token_id=eos,
            pad_token_id=pad,
            max_position_embeddings=4096,
            rope_scaling={"type": "mrope", "mrope_section": [4, 6, 6]},
            rope_theta=10000.0,
        ),
        vision_config=dict(
            depth=2,
            embed_dim=64,
            hidden_size=128,
            num_heads=4,
            patch_size=14,
            spatial_merge_size=2,
            in_chans=3,
            mlp_ratio=2,
            temporal_patch_size=2,
        ),
        image_token_id=ids("<|image_pad|>"),
        video_token_id=ids("<|video_pad|>"),
        vision_start_token_id=ids("<|vision_start|>"),
        vision_end_token_id=ids("<|vision_end|>"),
        bos_token_id=pad,
        eos_token_id=eos,
        pad_token_id=pad,
        vocab_size=vocab,
        hidden_size=128,
        tie_word_embeddings=False,
    )


def build_tiny_qwen2vl(out_dir: Path, seed: int = 0) -> Path:
    """Write a loadable tiny Qwen2-VL (weights, config, tokenizer, processor) into ``out_dir``.

    Deterministic for a given ``seed`` (same tokenizer, same weights). Returns ``out_dir``.
    """
    import torch
    from transformers import (
        Qwen2VLForConditionalGeneration,
        Qwen2VLImageProcessor,
        Qwen2VLProcessor,
        Qwen2VLVideoProcessor,
    )

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)

    tokenizer = _build_tokenizer()
    config = _build_config(tokenizer)

    # Seed a private generator's worth of state without disturbing the caller's global RNG.
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = Qwen2VLForConditionalGeneration(config)
    model.save_pretrained(out_dir, safe_serialization=True)

    processor = Qwen2VLProcessor(
        image_processor=Qwen2VLImageProcessor(min_pixels=MIN_PIXELS, max_pixels=MAX_PIXELS),
        video_processor=Qwen2VLVideoProcessor(min_pixels=MIN_PIXELS, max_pixels=MAX_PIXELS),
        tokenizer=tokenizer,
        chat_template=CHAT_TEMPLATE,
    )
    processor.save_pretrained(out_dir)  # also writes the tokenizer files
    return out_dir


def main(argv: list[str] | None = None) -> int:
    import argparse
    import time

    ap = argparse.ArgumentParser(description="Write a tiny random-weight Qwen2-VL (reads nothing: plumbing only).")
    ap.add_argument("out_dir", type=Path, help="model directory to write (configs/vlm-cpu.yaml names models/tiny-qwen2vl)")
    ap.add_argument("--seed", type=int, default=0, help="weight seed (same seed, same model)")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    out = build_tiny_qwen2vl(args.out_dir, seed=args.seed)
    print(f"{out} ({time.perf_counter() - t0:.1f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
