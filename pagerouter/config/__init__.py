"""The one pydantic config: one YAML drives `serve run`, `pagerouter serve` and the CLI.

Every section lives in its own module so each stage owns its knobs; every model forbids
unknown keys (a typo in a YAML is an error, not a silently ignored setting) and every field
carries a description (they are published by `GET /v1/config` and in the JSON schema).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import Field

from .base import StrictModel
from .batch import BatchConfig
from .bench import BenchConfig
from .filter import FilterConfig
from .isolation import IsolationConfig
from .limits import LimitsConfig
from .ocr import OcrConfig
from .output import OutputConfig
from .serve import ServeConfig
from .textlayer import TextLayerConfig
from .triage import TriageConfig

__all__ = ["PagerouterConfig", "load_config", "StrictModel"]


class PagerouterConfig(StrictModel):
    triage: TriageConfig = Field(default_factory=TriageConfig, description="Per-page routing decision.")
    text_layer: TextLayerConfig = Field(default_factory=TextLayerConfig, description="Reading good text layers.")
    ocr: OcrConfig = Field(default_factory=OcrConfig, description="Rendering, layout, small reader, checks, escalation.")
    output: OutputConfig = Field(default_factory=OutputConfig, description="Markdown/JSON rendering.")
    serve: ServeConfig = Field(default_factory=ServeConfig, description="Ray Serve deployments and endpoints.")
    isolation: IsolationConfig = Field(
        default_factory=IsolationConfig, description="Worker processes for MuPDF's work on untrusted input files."
    )
    limits: LimitsConfig = Field(
        default_factory=LimitsConfig, description="Limits per request, page and client (CLI and server)."
    )
    filter: FilterConfig = Field(
        default_factory=FilterConfig,
        description="Document filter before conversion (scripts, languages, spam, form letters); off by default.",
    )
    bench: BenchConfig = Field(
        default_factory=BenchConfig, description="Hourly prices `pagerouter bench` turns measured seconds into cost with."
    )
    batch: BatchConfig = Field(
        default_factory=BatchConfig,
        description="`pagerouter batch --ray`: page ranges, CPU tasks and the model tiers' actor pools on Ray Data.",
    )


def load_config(path: str | Path | None = None, overrides: dict[str, Any] | None = None) -> PagerouterConfig:
    """Load a YAML config (or the defaults) and apply dotted-free nested overrides.

    The YAML may be a plain pagerouter config, or a Serve config whose application `args`
    hold one under `config` (so the same file drives `serve run` and the CLI).
    """
    data: dict[str, Any] = {}
    if path is not None:
        p = Path(path)
        try:
            raw = yaml.safe_load(p.read_text(encoding="utf-8")) or {}
        except FileNotFoundError:
            raise FileNotFoundError(f"{p}: config file not found") from None
        except yaml.YAMLError as exc:
            raise ValueError(f"{p}: not valid YAML: {exc}") from None
        if not isinstance(raw, dict):
            raise ValueError(f"{p}: a config must be a mapping")
        if "applications" in raw:  # a Serve config: take the first app's args.config
            apps = raw.get("applications") or []
            raw = ((apps[0] or {}).get("args") or {}).get("config") or {} if apps else {}
        data = raw
    if overrides:
        data = _deep_merge(data, overrides)
    return PagerouterConfig.model_validate(data)


def _deep_merge(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    out = dict(a)
    for k, v in b.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = _deep_merge(out[k], v)
        else:
            out[k] = v
    return out
