"""The Serve graph without a Ray cluster: deployment classes called directly, configs, protos.

The shipped configs are checked with Serve's and the cluster launcher's own validation.
"""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from pagerouter.graph.builder import DEPLOYMENT_NAMES, GRPC_SERVICER, app_builder, build_app, deployment_options
from pagerouter.config import PagerouterConfig, load_config
from pagerouter.config.serve import BatchedDeploymentSettings, DeploymentSettings
from pagerouter.model import Block, CheckResult, Decision, Document, Page, TriageDecision
from pagerouter.wire import proto_model

REPO = Path(__file__).resolve().parent.parent


# -- batched deployments: one bad page fails only itself ------------------------------------
class FakeFailingEngine:
    """Reads/detects tasks by number; raises for the page numbered `bad` (a corrupt page)."""

    name, version = "fake", "0"

    def __init__(self, bad: int):
        self.bad = bad

    def _one(self, task, what: str):
        if task.number == self.bad:
            raise ValueError(f"page {task.number}: cannot {what}")
        return f"{what} {task.number}"

    def read_batch(self, tasks, layouts):
        return [self._one(t, "read") for t in tasks]

    def detect_batch(self, tasks):
        return [self._one(t, "detect") for t in tasks]


@pytest.mark.parametrize("kind", ["layout", "small_reader"])
def test_batched_stage_fails_only_the_bad_item(kind):
    """A Serve batch mixes pages of several requests: the body (`_run`) returns each task's own
    result or exception, and the per-call wrapper raises only for its own bad page."""
    import asyncio

    from pagerouter.deployments.batched import Layout, SmallReader
    from pagerouter.flow.engines import EngineSet

    cfg = PagerouterConfig()
    dep = (Layout if kind == "layout" else SmallReader).func_or_class(cfg.model_dump(), eager=False, metrics=False)
    dep.engines = EngineSet(cfg.ocr, prebuilt={kind: FakeFailingEngine(bad=2)})
    what = "detect" if kind == "layout" else "read"
    tasks = [SimpleNamespace(number=n) for n in (1, 2, 3)]
    run = dep._run(tasks) if kind == "layout" else dep._run(tasks, [None] * 3)
    assert run[0] == f"{what} 1" and run[2] == f"{what} 3"
    assert isinstance(run[1], ValueError) and "page 2" in str(run[1])
    assert dep.stats()["batch_sizes"] == {3: 1}
    assert dep.describe() == {"fake": "0"}

    async def fake_serve_batch(task, *_):  # stands in for @serve.batch over a 3-page batch
        results = dep._run(tasks) if kind == "layout" else dep._run(tasks, [None] * 3)
        return results[tasks.index(task)]

    dep._run_batch = fake_serve_batch

    def call(task):
        return dep.run(task) if kind == "layout" else dep.run(task, None)

    assert asyncio.run(call(tasks[2])) == f"{what} 3"
    with pytest.raises(ValueError, match="page 2: cannot"):
        asyncio.run(call(tasks[1]))


def test_batched_deployments_have_their_own_batch_queues():
    """One factory, two classes: each keeps its own `@serve.batch` settings."""
    from pagerouter.deployments.batched import Layout, SmallReader

    a, b = Layout.func_or_class, SmallReader.func_or_class
    assert a is not b and a._run_batch is not b._run_batch
    assert (Layout.name, SmallReader.name) == ("Layout", "SmallReader")


# -- configs --------------------------------------------------------------------------------
def test_deployment_options_follow_config():
    s = DeploymentSettings(num_cpus=0.5, num_gpus=1, min_replicas=0, max_replicas=3, initial_replicas=0,
                           downscale_to_zero_delay_s=5, resources={"triage_node": 0.01})
    opts = deployment_options(s)
    assert opts["ray_actor_options"] == {"num_cpus": 0.5, "num_gpus": 1, "resources": {"triage_node": 0.01}}
    a = opts["autoscaling_config"]
    assert (a["min_replicas"], a["max_replicas"], a["initial_replicas"], a["downscale_to_zero_delay_s"]) == (0, 3, 0, 5)
    from ray.serve.config import AutoscalingConfig

    AutoscalingConfig(**a)  # Serve accepts it
    with pytest.raises(ValueError, match="max_ongoing_requests"):
        BatchedDeploymentSettings(max_batch_size=16, max_ongoing_requests=8)
    with pytest.raises(ValueError, match="min_replicas"):
        DeploymentSettings(min_replicas=3, max_replicas=2)
    defaults = PagerouterConfig().serve
    assert defaults.large_reader.min_replicas == 0 and defaults.host == "127.0.0.1"


def test_build_app_and_app_builder(tmp_path):
    from ray.serve import Application

    assert isinstance(build_app(PagerouterConfig()), Application)
    path = tmp_path / "p.yaml"
    path.write_text(yaml.safe_dump({"serve": {"escalation_timeout_s": 7}}))
    app = app_builder({"config_path": str(path), "config": {"ocr": {"pages_in_flight": 3}}})
    assert isinstance(app, Application)
    with pytest.raises(ValueError, match="unknown application args"):
        app_builder({"cfg": {}})
    with pytest.raises(Exception, match="extra_forbidden|Extra inputs"):
        app_builder({"config": {"serve": {"no_such_knob": 1}}})


def test_shipped_serve_yaml_is_a_valid_serve_config():
    from ray.serve.schema import ServeDeploySchema

    raw = yaml.safe_load((REPO / "configs" / "serve.yaml").read_text())
    schema = ServeDeploySchema.model_validate(raw)
    app = schema.applications[0]
    assert app.import_path == "pagerouter.graph.builder:app_builder"
    assert {d.name for d in app.deployments} == set(DEPLOYMENT_NAMES)
    large = next(d for d in app.deployments if d.name == "LargeReader")
    assert large.autoscaling_config["min_replicas"] == 0
    assert raw["grpc_options"]["grpc_servicer_functions"] == [GRPC_SERVICER]
    assert raw["http_options"]["host"] == "127.0.0.1"
    cfg = load_config(REPO / "configs" / "serve.yaml")  # the CLI reads the same file
    assert cfg.ocr.pages_in_flight == raw["applications"][0]["args"]["config"]["ocr"]["pages_in_flight"]
    app_builder(raw["applications"][0]["args"])


def test_cluster_yaml_passes_ray_cluster_validation():
    from ray.autoscaler._private.util import prepare_config, validate_config

    raw = yaml.safe_load((REPO / "cluster.yaml").read_text())
    validate_config(prepare_config(copy.deepcopy(raw)))
    types = raw["available_node_types"]
    assert "GPU" not in types[raw["head_node_type"]]["resources"]
    assert types["gpu_worker"]["resources"]["GPU"] >= 1 and "triage_node" in types["cpu_worker"]["resources"]
    assert any("pip install" in c and "pagerouter" in c for c in raw["setup_commands"])
    broken = copy.deepcopy(raw)
    del broken["available_node_types"]["gpu_worker"]["node_config"]
    with pytest.raises(Exception, match="node_config"):
        validate_config(prepare_config(broken))


# -- protobuf model -------------------------------------------------------------------------
def test_proto_round_trip_is_lossless():
    decision = TriageDecision(route="mixed", scores={"ink": 0.125, "chars": 1e-9}, reasons=["because"],
                              script="Latin", ocr_regions=[(1.5, 2.25, 3.0, 4.0)])
    doc = Document(
        source="x.pdf", page_count=3, engines={"pymupdf": "2.0"},
        pages=[
            Page(number=1, status="flagged", route="mixed", triage=decision, rotation=90, width=612.0, height=792.5,
                 blocks=[Block(text="| a |", role="table", bbox=(0.1, 0.2, 0.3, 0.4), page=1, engine="rapidocr",
                               engine_version="3", route="ocr", confidence=0.3333333333333333, order=2, level=None,
                               cells=[["a", "b"], []], image="f.png", witnesses=["tesseract"]),
                         Block(text="T", role="heading", bbox=(0, 0, 1, 1), page=1, engine="pymupdf",
                               route="text_layer", confidence=1.0, level=1, cells=None),
                         Block(text="Vol 8", role="header", bbox=(0, 0, 1, 1), page=1, engine="pymupdf",
                               route="text_layer", confidence=1.0,
                               furniture=Decision(scores={"furniture": 0.75}, reasons=["in the top band"]))],
                 checks=[CheckResult(name="low_confidence", passed=False, score=0.5, threshold=0.8, reason="low"),
                         CheckResult(name="x", passed=True)],
                 flags=["low_confidence"], timings={"read": 0.123456789}, language="Latin"),
            Page(number=2, status="failed", route=None, error="boom"),
            Page(number=3, status="ok", route="text_layer", blocks=[
                Block(text="", role="table", bbox=(0, 0, 1, 1), page=3, engine="e", route="ocr", confidence=0.0,
                      cells=[])]),
        ],
    )
    back = proto_model.document_from_proto(proto_model.document_to_proto(doc))
    assert back == doc
    wire = proto_model.document_to_proto(doc).SerializeToString()
    from pagerouter.wire.protos import pagerouter_pb2 as pb

    assert proto_model.document_from_proto(pb.Document.FromString(wire)) == doc


def _without_generator_stamps(stub: str) -> str:
    """A generated stub less the versions of the tools that made it: the grpcio a `_pb2_grpc.py`
    demands at run time (`GRPC_GENERATED_VERSION`, the grpcio-tools that generated it) and the
    protobuf release a `_pb2.py` names. A newer grpcio-tools (1.85.4, released after the stubs
    were made with 1.85.1) stamps its own version and nothing else differs; the committed stubs
    keep the oldest grpcio pyproject.toml allows, which regenerating would raise."""
    import re

    stub = re.sub(r"GRPC_GENERATED_VERSION = '[^']*'", "GRPC_GENERATED_VERSION = ...", stub)
    stub = re.sub(r"# Protobuf Python Version: \S+", "# Protobuf Python Version: ...", stub)
    return re.sub(r"(ValidateProtobufRuntimeVersion\(\s*_runtime_version\.Domain\.PUBLIC,)\s*\d+,\s*\d+,\s*\d+,",
                  r"\1 ...,", stub)


def test_generated_stubs_match_the_proto(tmp_path):
    """The committed stubs are what scripts/gen_protos.sh generates from the .proto (but for the
    generating tools' version stamps), and ask no newer grpcio than pyproject.toml allows."""
    import re

    out = tmp_path / "gen"
    out.mkdir()
    subprocess.run(
        [sys.executable, "-m", "grpc_tools.protoc", "-I", str(REPO), f"--python_out={out}",
         f"--grpc_python_out={out}", str(REPO / "pagerouter/wire/protos/pagerouter.proto")],
        check=True, capture_output=True, timeout=60,
    )
    for name in ("pagerouter_pb2.py", "pagerouter_pb2_grpc.py"):
        made = _without_generator_stamps((out / "pagerouter/wire/protos" / name).read_text())
        assert made == _without_generator_stamps((REPO / "pagerouter/wire/protos" / name).read_text()), name
    stub = (REPO / "pagerouter/wire/protos/pagerouter_pb2_grpc.py").read_text()
    demanded = re.search(r"GRPC_GENERATED_VERSION = '([^']*)'", stub).group(1)
    floor = re.search(r'"grpcio>=([^,"]+)', (REPO / "pyproject.toml").read_text()).group(1)
    assert demanded == floor, "the stubs demand the grpcio pyproject.toml's floor names"
