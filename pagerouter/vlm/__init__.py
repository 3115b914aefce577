"""Vision-language-model tiers: engines (vLLM in-process, an OpenAI-compatible server),
model profiles (prompt, render size, output parser), the retry ladder and the readers that
plug them into the page graph as `small_reader` / `escalation` kinds.

Nothing here imports vLLM, torch or Ray at module import: an engine module loads its
library only when the engine is built.
"""
