"""Checks of one VLM output: did the model stop cleanly, and is its text a page reading?

A vision-language model fails in ways an OCR engine does not: it runs out of tokens
(finish_reason "length"), leaks chat-template or refusal text into the page, degenerates into
repeating its last phrase until the token limit, or reads a page it cannot see. Each check is
a `CheckResult` with a score, a threshold and a reason in words, so a rejected attempt can say
why. The engine-neutral text checks (`pagerouter.ocr.checks.check_text`: repetition anywhere,
drift, empty output on ink, text on a blank page, wrong script) run too.

Check names: `vlm_error`, `vlm_truncated`, `vlm_leaked_text`, `vlm_tail_loop`,
`vlm_low_confidence` (only when the tier sets `min_confidence` and the engine gave logprobs),
then check_text's names except `low_confidence`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from ..config.checks import ChecksConfig
from ..config.vlm import VlmTierConfig
from ..model import CheckResult
from ..ocr import text_stats as ts
from ..ocr.checks import check_text
from ..common.unicode_scripts import letter_script
from .base import Generation

QUOTE_CHARS = 60
"""Longest excerpt of leaked text quoted in a reason."""


def judge_output(
    gen: Generation,
    text: str,
    *,
    ink: float,
    expected_script: str | None,
    tier: VlmTierConfig,
    checks: ChecksConfig,
) -> list[CheckResult]:
    """All checks of one generation. `text` is the page (or region) text the profile made of
    `gen.text` (e.g. without olmOCR's front matter); `ink` is the page's ink share (0..1)."""
    results = [_error(gen), _truncated(gen, tier), _leaked(gen.text, text, tier.leak_patterns)]
    # The tail of the raw generation is where a model degenerates; the profile's text may
    # have dropped or reshaped parts of it.
    results.append(_tail_loop(gen.text or text, tier))
    if tier.min_confidence > 0 and gen.confidence is not None:
        c, t = gen.confidence, tier.min_confidence
        results.append(CheckResult(
            name="vlm_low_confidence", passed=c >= t, score=round(c, 4), threshold=t,
            reason=f"model confidence exp(mean logprob) {c:.2f} {'>=' if c >= t else '<'} {t:.2f}",
        ))
    # check_text's `low_confidence` scores OCR line confidences; the VLM's own certainty is
    # `vlm_low_confidence` above, so it is dropped here rather than passing vacuously.
    results += [
        r for r in check_text(text, confidences=(), ink=ink, expected_script=expected_script, cfg=checks)
        if r.name != "low_confidence"
    ]
    return results


def failed_reasons(results: Iterable[CheckResult]) -> list[str]:
    """`name: reason` of every failed check, in order (what an Attempt's rejected_because holds)."""
    return [f"{r.name}: {r.reason}" for r in results if not r.passed]


# -- stop and leak checks ----------------------------------------------------------------------


def _error(gen: Generation) -> CheckResult:
    bad = gen.finish_reason in ("error", "abort")
    if not bad:
        reason = f"generation ended with {gen.finish_reason!r}"
    elif gen.finish_reason == "abort":
        reason = "generation was aborted before it finished" + (f": {gen.error}" if gen.error else "")
    else:
        reason = "engine error" + (f": {gen.error}" if gen.error else " (no message)")
    return CheckResult(name="vlm_error", passed=not bad, score=float(bad), threshold=0.0, reason=reason)


def _truncated(gen: Generation, tier: VlmTierConfig) -> CheckResult:
    """A "length" stop, naming the limit that was hit: vLLM stops at max_model_len (prompt +
    output) even when max_tokens is larger, so the two are told apart by the token counts."""
    cut = gen.finish_reason == "length"
    n, p = gen.completion_tokens, gen.prompt_tokens
    limit = gen.max_tokens or tier.max_new_tokens
    ctx = gen.context_len or tier.engine.max_model_len
    if not cut:
        reason = f"{n} tokens generated, stopped before max_tokens {limit}"
    elif ctx and p and p + n >= ctx:
        reason = f"hit max_model_len {ctx} ({p} prompt + {n} generated tokens): the output is cut off"
    elif limit and n >= limit:
        reason = f"hit max_tokens {limit} ({n} tokens generated): the output is cut off"
    else:
        under = f"max_tokens {limit}" + (f" and max_model_len {ctx} ({p} prompt tokens)" if ctx else "")
        reason = f"stopped for length after {n} tokens, under {under}: the output is cut off"
    return CheckResult(name="vlm_truncated", passed=not cut, score=float(n), threshold=float(limit or 0), reason=reason)


@lru_cache(maxsize=16)
def _compiled(patterns: tuple[str, ...]) -> tuple[re.Pattern, ...]:
    return tuple(re.compile(p) for p in patterns)


def _leaked(raw: str, text: str, patterns: list[str]) -> CheckResult:
    # The profile's text is what would be published; the raw output is searched too, since a
    # parser may drop the very line that leaked (a refusal instead of front matter).
    sources = [text] if raw == text else [text, raw]
    hits: list[tuple[str, str]] = []
    for pat in _compiled(tuple(patterns)):
        for src in sources:
            m = pat.search(src)
            if m:
                hits.append((pat.pattern, _quote(src, m)))
                break
    if not hits:
        return CheckResult(name="vlm_leaked_text", passed=True, score=0.0, threshold=0.0,
                           reason=f"none of {len(patterns)} leak patterns matches")
    quote, pattern = hits[0][1], hits[0][0]
    more = f" (and {len(hits) - 1} more patterns)" if len(hits) > 1 else ""
    return CheckResult(
        name="vlm_leaked_text", passed=False, score=float(len(hits)), threshold=0.0,
        reason=f"status/stop text in the output: {quote!r} matches {pattern!r}{more}",
    )


def _quote(src: str, m: re.Match) -> str:
    """The match and the rest of its line, trimmed: enough to see what leaked."""
    end = src.find("\n", m.end())
    s = src[m.start() : len(src) if end < 0 else end].strip()
    return s if len(s) <= QUOTE_CHARS else s[: QUOTE_CHARS - 1] + "…"


# -- tail loop ---------------------------------------------------------------------------------


@dataclass
class TailRepeat:
    """The end of a text as `repeats` back-to-back copies of one unit (tokens or a line)."""

    unit: str  # the repeated unit, as text
    size: int  # tokens per unit (0 for a line unit)
    repeats: int  # whole copies at the end
    chars: int  # letters/digits the copies hold together
    words: int  # distinct word tokens in one unit
    by_line: bool = False


def _is_word(tok: str) -> bool:
    """Same notion as check_text's repetition: 2+ letters/digits, or a CJK/Thai character."""
    return ts.alnum_count(tok) >= 2 or letter_script(tok[0]) in ts.NO_SPACE_SCRIPTS


def tail_repeats(text: str, max_period: int) -> list[TailRepeat]:
    """Every periodic tail of `text`: for each unit size 1..max_period the run of tokens equal
    to the token one unit earlier, counted back from the end; and the run of equal last lines.

    A last token (line) that is a prefix of the one a unit earlier counts as part of the run:
    a loop stopped by max_tokens usually ends mid-word.
    """
    out: list[TailRepeat] = []
    toks = ts.tokens(text)
    n = len(toks)
    for k in range(1, min(max_period, n // 2) + 1):
        e = n  # end (exclusive) of the periodic stretch
        if n - 1 - k >= 0 and toks[-1] != toks[-1 - k] and toks[-1 - k].startswith(toks[-1]):
            e = n - 1  # cut-off last token
        i, run = e - 1, 0
        while i - k >= 0 and toks[i] == toks[i - k]:
            run += 1
            i -= 1
        span = run + k  # toks[e - span : e] is periodic with period k
        if span // k < 2:
            continue
        tail = toks[e - span : e]
        unit = tail[:k]
        out.append(TailRepeat(
            unit=ts.join_tokens(unit), size=k, repeats=span // k,
            chars=sum(ts.alnum_count(t) for t in tail), words=len({t for t in unit if _is_word(t)}),
        ))
    lines = [" ".join(ln.split()) for ln in text.splitlines() if ln.strip()]
    if len(lines) >= 3 and lines[-1] != lines[-2] and lines[-2].startswith(lines[-1]):
        lines.pop()  # cut-off last line
    if len(lines) >= 2:
        last, m = lines[-1], 1
        while m < len(lines) and lines[-1 - m] == last:
            m += 1
        if m >= 2:
            out.append(TailRepeat(
                unit=last, size=0, repeats=m, chars=m * ts.alnum_count(last),
                words=len({t for t in ts.tokens(last) if _is_word(t)}), by_line=True,
            ))
    return out


def _tail_loop(text: str, tier: VlmTierConfig) -> CheckResult:
    t_rep, t_chars, t_words = tier.tail_loop_min_repeats, tier.tail_loop_min_chars, tier.tail_loop_min_unit_words
    rule = (f"a loop needs >= {t_rep} copies holding >= {t_chars} letters/digits, "
            f"of a unit with >= {t_words} distinct words")
    # Units without enough distinct words are legit layout (dot leaders, `| 0` cells) or
    # another check's business (one token repeated), so they never count.
    cands = [c for c in tail_repeats(text, tier.tail_loop_max_period) if c.words >= t_words]
    loops = [c for c in cands if c.repeats >= t_rep and c.chars >= t_chars]
    if loops:
        # The longest looped stretch; among equals the smallest unit (its multiples tie).
        c = max(loops, key=lambda c: (c.chars, -c.size))
        what = f"line {c.unit[:80]!r}" if c.by_line else f"{c.size}-token unit {c.unit[:80]!r}"
        return CheckResult(
            name="vlm_tail_loop", passed=False, score=float(c.repeats), threshold=float(t_rep),
            reason=f"the output ends in the {what} repeated {c.repeats} times ({c.chars} letters/digits): "
            "the model degenerated into a loop",
        )
    if not cands:
        return CheckResult(name="vlm_tail_loop", passed=True, score=0.0, threshold=float(t_rep),
                           reason="the end of the output does not repeat")
    c = max(cands, key=lambda c: (c.repeats, c.chars))
    what = f"line {c.unit[:60]!r}" if c.by_line else f"unit {c.unit[:60]!r}"
    return CheckResult(
        name="vlm_tail_loop", passed=True, score=float(c.repeats), threshold=float(t_rep),
        reason=f"the end repeats the {what} {c.repeats} times ({c.chars} letters/digits); {rule}",
    )
