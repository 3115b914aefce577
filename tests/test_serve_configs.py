"""The shipped Serve configs (configs/*.yaml): Ray Serve's schema, the pagerouter config under
`applications[0].args.config`, deployment names, and the GPU configs' resources.

Ray Serve's own schema ignores unknown keys (`ServeDeploySchema.model_validate` accepts a
`num_gpu:` typo and drops it), so the Serve side is also checked key by key against the schema's
pydantic fields. The pagerouter side is read with `load_config`, the loader `pagerouter serve
--config` and `pagerouter convert --config` use (extra keys forbidden).

Nothing here starts Ray or loads a model: the GPU configs have not been run on a GPU by these
tests (no GPU here); they check keys, names and resource arithmetic only.
"""

from __future__ import annotations

import copy
import typing
from pathlib import Path

import pytest
import yaml
from pydantic import BaseModel, ValidationError

from pagerouter.graph.builder import DEPLOYMENT_NAMES, GRPC_SERVICER, app_builder, deployment_options
from pagerouter.config import PagerouterConfig, load_config

from .conftest import require_vlm_cpu

REPO = Path(__file__).resolve().parent.parent
CONFIGS = sorted((REPO / "configs").glob("*.yaml"))
GPU_CONFIGS = ["serve-gpu.yaml", "serve-cluster.yaml"]
ROLE_OF_DEPLOYMENT = {"Ingress": "ingress", "Triage": "triage", "Layout": "layout", "SmallReader": "small_reader",
                      "LargeReader": "large_reader"}


def _raw(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


# -- helpers (each returns a list of problems, so the negative tests can call them) -----------
def _models_in(annotation) -> list[type[BaseModel]]:
    """The pydantic models an annotation can hold (through Optional/Union/list/dict)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in typing.get_args(annotation) for m in _models_in(arg)]


def unknown_keys(model: type[BaseModel], data, path: str = "") -> list[str]:
    """Keys of `data` (recursively) that `model` has no field (or alias) for."""
    if not isinstance(data, dict):
        return []
    fields = model.model_fields
    by_name = {**{n: f for n, f in fields.items()}, **{f.alias: f for f in fields.values() if f.alias}}
    out: list[str] = []
    for key, value in data.items():
        field = by_name.get(key)
        if field is None:
            out.append(f"{path}{key}")
            continue
        subs = _models_in(field.annotation)
        items = value if isinstance(value, list) else [value]
        for i, item in enumerate(items):
            if subs and isinstance(item, dict):
                where = f"{path}{key}{f'[{i}]' if isinstance(value, list) else ''}."
                out += min((unknown_keys(m, item, where) for m in subs), key=len)
    return out


def serve_unknown_keys(raw: dict) -> list[str]:
    from ray.serve.schema import ServeDeploySchema

    return unknown_keys(ServeDeploySchema, raw)


def deployment_disagreements(raw: dict) -> list[str]:
    """Where a `deployments:` entry contradicts what the builder derives from
    args.config.serve.<deployment> (checked for every deployment the pagerouter config sets:
    `pagerouter serve --config` applies only args.config, `serve run` applies the list last)."""
    app = raw["applications"][0]
    serve_block = (app.get("args") or {}).get("config", {}).get("serve", {}) or {}
    cfg = load_config(overrides=app["args"]["config"])
    out = []
    for entry in app.get("deployments") or []:
        role = ROLE_OF_DEPLOYMENT.get(entry["name"])
        if role is None or role not in serve_block:
            continue
        derived = deployment_options(getattr(cfg.serve, role))
        for key, value in entry.items():
            if key != "name" and derived.get(key) != value:
                out.append(f"{entry['name']}.{key}: YAML {value!r} != args.config.serve.{role} -> {derived.get(key)!r}")
    return out


def effective_options(raw: dict, name: str) -> dict:
    """Serve options a deployment gets under `serve run`: the builder's, then the YAML entry's."""
    app = raw["applications"][0]
    cfg = load_config(overrides=app["args"]["config"])
    options = deployment_options(getattr(cfg.serve, ROLE_OF_DEPLOYMENT[name]))
    entry = next((d for d in app.get("deployments") or [] if d["name"] == name), {})
    return {**options, **{k: v for k, v in entry.items() if k != "name"}}


# -- every config ---------------------------------------------------------------------------
def test_the_configs_are_there():
    names = {p.name for p in CONFIGS}
    assert {"serve.yaml", *GPU_CONFIGS} <= names


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_config_is_a_valid_serve_config_with_known_keys_only(path):
    from ray.serve.schema import ServeDeploySchema

    raw = _raw(path)
    schema = ServeDeploySchema.model_validate(raw)
    assert serve_unknown_keys(raw) == []
    assert len(schema.applications) == 1
    app = schema.applications[0]
    assert app.import_path == "pagerouter.graph.builder:app_builder"
    assert raw["grpc_options"]["grpc_servicer_functions"] == [GRPC_SERVICER]


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_args_config_is_a_pagerouter_config_for_every_entry_point(path):
    raw = _raw(path)
    args = raw["applications"][0]["args"]
    cfg = load_config(path)  # what `pagerouter serve --config` / `pagerouter convert --config` read
    assert isinstance(cfg, PagerouterConfig)
    assert cfg == PagerouterConfig.model_validate(args["config"])
    app_builder(args)  # what `serve run` calls (builds the graph; starts nothing)
    # the proxy timeout `serve run` uses is the one `pagerouter serve` uses
    assert raw["http_options"]["request_timeout_s"] == cfg.serve.request_timeout_s


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_deployment_names_are_the_graphs(path):
    names = [d["name"] for d in _raw(path)["applications"][0].get("deployments") or []]
    assert len(names) == len(set(names)), f"duplicate deployment entries in {path.name}"
    assert set(names) == set(DEPLOYMENT_NAMES)


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_deployments_list_agrees_with_args_config(path):
    assert deployment_disagreements(_raw(path)) == []


# -- the GPU configs --------------------------------------------------------------------------
@pytest.mark.parametrize("name", GPU_CONFIGS)
def test_gpu_config_puts_the_vlm_tiers_on_gpus(name):
    raw = _raw(REPO / "configs" / name)
    cfg = load_config(REPO / "configs" / name)
    ocr = cfg.ocr

    small, large = ocr.small_reader, ocr.escalation
    assert small.kind == "vlm" and small.vlm.profile == "paddleocr_vl" and small.render_engine == "paddleocr_vl"
    assert small.vlm.engine.kind == "vllm" and small.vlm.engine.model == "PaddlePaddle/PaddleOCR-VL"
    # the region-tier values survive the YAML replacing the tier mapping
    assert small.vlm.max_new_tokens == 1024 and small.vlm.ladder.max_attempts == 2 and not small.vlm.anchor_text
    assert large.enabled and large.kind == "vlm" and large.vlm.profile == "olmocr"
    assert large.vlm.engine.kind == "vllm" and large.vlm.engine.model == "allenai/olmOCR-2-7B-1025-FP8"
    assert large.vlm.engine.quantization is None  # read from the checkpoint (see the YAML comment)
    assert large.vlm.engine.max_model_len == 16384 and large.vlm.max_new_tokens == 8000
    assert ocr.layout.device == "cuda"

    opts = {n: effective_options(raw, n) for n in DEPLOYMENT_NAMES}
    gpus = {n: opts[n]["ray_actor_options"].get("num_gpus", 0) for n in DEPLOYMENT_NAMES}
    assert 0 < gpus["SmallReader"] < 1 and 0 < gpus["LargeReader"] < 1 and 0 < gpus["Layout"] < 1
    assert gpus["Ingress"] == gpus["Triage"] == 0
    # Ray's GPU share is bookkeeping; vLLM's memory share is the real use: it must fit the share
    assert small.vlm.engine.gpu_memory_utilization <= gpus["SmallReader"]
    assert large.vlm.engine.gpu_memory_utilization <= gpus["LargeReader"]
    # one replica of each GPU stage fits one GPU
    assert gpus["Layout"] + gpus["SmallReader"] + gpus["LargeReader"] <= 1 + 1e-9

    large_scaling = opts["LargeReader"]["autoscaling_config"]
    assert large_scaling["min_replicas"] == 0 and large_scaling.get("initial_replicas", 0) == 0
    assert large_scaling.get("downscale_to_zero_delay_s") is not None
    assert cfg.serve.large_reader.min_replicas == 0  # also under `pagerouter serve`, which ignores the list

    # the escalation wait is bounded and ordered: ladder < escalation wait < page < request
    s = cfg.serve
    assert large.vlm.ladder.max_seconds is not None and large.vlm.ladder.max_seconds < s.escalation_timeout_s
    assert s.escalation_timeout_s < s.page_timeout_s <= s.request_timeout_s


def test_single_gpu_config_fits_one_gpu_at_full_scale():
    raw = _raw(REPO / "configs" / "serve-gpu.yaml")
    total = 0.0
    for n in DEPLOYMENT_NAMES:
        o = effective_options(raw, n)
        total += o["ray_actor_options"].get("num_gpus", 0) * o["autoscaling_config"]["max_replicas"]
    assert total <= 1 + 1e-9


def test_cluster_config_fits_cluster_yaml():
    raw = _raw(REPO / "configs" / "serve-cluster.yaml")
    cluster = _raw(REPO / "cluster.yaml")
    types = cluster["available_node_types"]
    gpu_types = {k: t for k, t in types.items() if t["resources"].get("GPU")}
    cpu_types = {k: t for k, t in types.items() if not t["resources"].get("GPU")}
    launchable_gpus = sum(t["resources"]["GPU"] * t.get("max_workers", 0) for t in gpu_types.values())
    opts = {n: effective_options(raw, n) for n in DEPLOYMENT_NAMES}
    gpu_stages = [n for n in DEPLOYMENT_NAMES if opts[n]["ray_actor_options"].get("num_gpus")]
    assert set(gpu_stages) == {"Layout", "SmallReader", "LargeReader"}
    # GPU shares at full scale fit the GPUs the autoscaler can launch
    at_max = sum(opts[n]["ray_actor_options"]["num_gpus"] * opts[n]["autoscaling_config"]["max_replicas"]
                 for n in gpu_stages)
    assert at_max <= launchable_gpus + 1e-9
    # one replica of each GPU stage fits one GPU node's CPUs
    assert all(sum(opts[n]["ray_actor_options"]["num_cpus"] for n in gpu_stages) <= t["resources"]["CPU"]
               for t in gpu_types.values())
    # CPU stages are pinned by a custom resource that only CPU node types have
    for n in ("Ingress", "Triage"):
        res = opts[n]["ray_actor_options"].get("resources") or {}
        assert res, f"{n} is not pinned to a node type"
        for key in res:
            assert any(key in t["resources"] for t in cpu_types.values()), f"{n}: no CPU node type has {key}"
            assert not any(key in t["resources"] for t in gpu_types.values()), f"{n}: {key} is on a GPU node type"
    # more than the single machine's replicas, LargeReader still sleeping at zero
    assert opts["Triage"]["autoscaling_config"]["max_replicas"] > 4
    assert opts["LargeReader"]["autoscaling_config"]["min_replicas"] == 0


def test_cluster_and_single_gpu_configs_run_the_same_graph():
    a = load_config(REPO / "configs" / "serve-gpu.yaml")
    b = load_config(REPO / "configs" / "serve-cluster.yaml")
    assert a.ocr == b.ocr


@pytest.mark.parametrize("name", GPU_CONFIGS)
def test_vllm_engine_kwargs_are_vllm_engine_arguments(name):
    require_vlm_cpu()  # the one allowed skip: PAGEROUTER_VLM_CPU=0 leaves vLLM out; otherwise CI installs it
    import dataclasses

    from vllm.engine.arg_utils import AsyncEngineArgs

    known = {f.name for f in dataclasses.fields(AsyncEngineArgs)}
    ocr = load_config(REPO / "configs" / name).ocr
    for tier in (ocr.small_reader.vlm, ocr.escalation.vlm):
        assert set(tier.engine.engine_kwargs) <= known, set(tier.engine.engine_kwargs) - known


# -- the checks can fail ----------------------------------------------------------------------
def test_a_typo_in_args_config_fails(tmp_path):
    raw = _raw(REPO / "configs" / "serve-gpu.yaml")
    engine = raw["applications"][0]["args"]["config"]["ocr"]["escalation"]["vlm"]["engine"]
    engine["gpu_memory_utilisation"] = engine.pop("gpu_memory_utilization")
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(raw))
    with pytest.raises(ValidationError, match="gpu_memory_utilisation"):
        load_config(bad)
    with pytest.raises(ValidationError):
        app_builder(raw["applications"][0]["args"])


def test_a_typo_in_the_serve_side_fails_although_serve_ignores_it():
    from ray.serve.schema import ServeDeploySchema

    raw = _raw(REPO / "configs" / "serve-gpu.yaml")
    bad = copy.deepcopy(raw)
    large = next(d for d in bad["applications"][0]["deployments"] if d["name"] == "LargeReader")
    large["ray_actor_options"]["num_gpu"] = large["ray_actor_options"].pop("num_gpus")
    large["autoscaling_config"]["min_replica"] = 0
    bad["applications"][0]["deployments"][0]["max_ongoing_request"] = 3
    bad["http_option"] = {}
    ServeDeploySchema.model_validate(bad)  # Serve itself drops all of these silently...
    assert sorted(serve_unknown_keys(bad)) == [  # ...the key check does not
        "applications[0].deployments[0].max_ongoing_request",
        "applications[0].deployments[4].autoscaling_config.min_replica",
        "applications[0].deployments[4].ray_actor_options.num_gpu",
        "http_option",
    ]


def test_a_deployments_entry_contradicting_args_config_fails():
    raw = _raw(REPO / "configs" / "serve-gpu.yaml")
    bad = copy.deepcopy(raw)
    large = next(d for d in bad["applications"][0]["deployments"] if d["name"] == "LargeReader")
    large["ray_actor_options"]["num_gpus"] = 1
    large["autoscaling_config"]["min_replicas"] = 1
    problems = deployment_disagreements(bad)
    assert len(problems) == 2 and all(p.startswith("LargeReader.") for p in problems)
