"""The Serve graph without a Ray cluster: in-process runs, configs, protos, the batch guard.

In-process (Serve local testing mode) tests run the real deployments and engines; the rest
check the shipped configs with Serve's and the cluster launcher's own validation.
"""

from __future__ import annotations

import copy
import socket
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pymupdf
import pytest
import yaml

from clients import proto_model
from deployments.common import batching_supported
from graph.builder import DEPLOYMENT_NAMES, GRPC_SERVICER, app_builder, build_app, deployment_options
from pagerouter import synth
from pagerouter.config import PagerouterConfig, load_config
from pagerouter.config.serve import BatchedDeploymentSettings, DeploymentSettings
from pagerouter.inputs import InputError
from pagerouter.model import Block, CheckResult, Document, Page, TriageDecision

REPO = Path(__file__).resolve().parent.parent


# -- the @serve.batch guard -----------------------------------------------------------------
def test_serve_batch_still_broken_in_local_mode():
    """Ray 2.60's @serve.batch fails in local testing mode; graph.local runs engines unbatched
    in-process because of it. If this test fails, Ray fixed the bug: drop the guard in
    deployments/common.py (BATCH_BROKEN_IN_LOCAL_MODE)."""
    from ray import serve

    @serve.deployment
    class Doubler:
        @serve.batch(max_batch_size=2, batch_wait_timeout_s=0.01)
        async def __call__(self, xs: list[int]) -> list[int]:
            return [2 * x for x in xs]

    handle = serve.run(Doubler.bind(), name="batch-probe", route_prefix=None, _local_testing_mode=True)
    with pytest.raises(Exception, match="get_replica_context"):
        handle.remote(3).result(timeout_s=30)
    assert batching_supported(local=False) is True
    assert batching_supported(local=True) is False


# -- in-process graph -----------------------------------------------------------------------
@pytest.fixture(scope="module")
def mixed_pdf(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("local") / "mixed.pdf"
    doc = pymupdf.open()
    synth.add_text_page(doc, ["The quick brown fox jumps over the lazy dog. " * 3], title="In process")
    synth.add_scanned_page(doc, ["Invoice number 4711", "Total due 99 EUR"], size=(320, 220), fontsize=14)
    synth.add_blank_page(doc)
    doc.save(path)
    doc.close()
    return path


class RecordingProgress:
    instances: list = []

    def __init__(self, name: str, total: int, enabled: bool):
        self.name, self.total, self.enabled, self.steps, self.closed = name, total, enabled, [], False
        RecordingProgress.instances.append(self)

    def step(self, page=None) -> None:
        self.steps.append(page.number)

    def close(self) -> None:
        self.closed = True


def _args(**kw):
    return SimpleNamespace(**{"pages": None, "password": None, "images": None, "quiet": False, **kw})


@pytest.mark.slow
def test_in_process_graph_matches_core_pipeline(mixed_pdf):
    from graph.local import convert_with_graph
    from pagerouter.local import convert_file

    cfg = PagerouterConfig()
    via_graph = convert_with_graph(mixed_pdf, cfg, _args(), RecordingProgress)
    core = convert_file(mixed_pdf, cfg)
    assert [p.route for p in via_graph.pages] == ["text_layer", "ocr", "blank"]
    assert "4711" in " ".join(b.text for b in via_graph.pages[1].blocks)
    strip = lambda d: [p.model_dump(exclude={"timings"}) for p in d.pages]  # noqa: E731
    assert strip(via_graph) == strip(core)
    assert via_graph.source == core.source == "mixed.pdf"
    bar = RecordingProgress.instances[-1]
    assert bar.total == 3 and bar.steps == [1, 2, 3] and bar.closed and bar.name == "mixed.pdf"


def test_in_process_graph_pages_password_and_errors(mixed_pdf, tmp_path):
    from graph.local import convert_with_graph

    cfg = PagerouterConfig()
    doc = convert_with_graph(mixed_pdf, cfg, _args(pages="1,3", quiet=True), RecordingProgress)
    assert [p.number for p in doc.pages] == [1, 3] and doc.page_count == 3
    assert RecordingProgress.instances[-1].enabled is False
    with pytest.raises(InputError, match="page 7 requested"):
        convert_with_graph(mixed_pdf, cfg, _args(pages="7"), RecordingProgress)
    junk = tmp_path / "junk.pdf"
    junk.write_bytes(b"nothing like a pdf")
    with pytest.raises(InputError, match=r"junk\.pdf: not a PDF"):
        convert_with_graph(junk, cfg, _args(), RecordingProgress)
    with pytest.raises(InputError, match="no such file"):
        convert_with_graph(tmp_path / "missing.pdf", cfg, _args(), RecordingProgress)
    locked = tmp_path / "locked.pdf"
    d = pymupdf.open()
    synth.add_text_page(d, ["Secret words on a locked page."])
    d.save(locked, encryption=pymupdf.PDF_ENCRYPT_AES_256, owner_pw="o", user_pw="pw")
    d.close()
    with pytest.raises(InputError, match="password is needed"):
        convert_with_graph(locked, cfg, _args(), RecordingProgress)
    opened = convert_with_graph(locked, cfg, _args(password="pw"), RecordingProgress)
    assert "Secret words" in opened.pages[0].blocks[0].text


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

    from deployments.common import LazyEngine
    from deployments.layout import Layout
    from deployments.small_reader import SmallReader

    cls = (Layout if kind == "layout" else SmallReader).func_or_class
    dep = cls(PagerouterConfig().model_dump(), batching=False, eager=False, metrics=False)
    dep.engine = LazyEngine(lambda: FakeFailingEngine(bad=2))
    what = "detect" if kind == "layout" else "read"
    tasks = [SimpleNamespace(number=n) for n in (1, 2, 3)]
    run = dep._run(tasks) if kind == "layout" else dep._run(tasks, [None] * 3)
    assert run[0] == f"{what} 1" and run[2] == f"{what} 3"
    assert isinstance(run[1], ValueError) and "page 2" in str(run[1])
    assert dep.stats()["batch_sizes"] == {3: 1}

    def call(task):
        return dep.detect(task) if kind == "layout" else dep.read(task, None)

    assert asyncio.run(call(tasks[0])) == f"{what} 1"
    with pytest.raises(ValueError, match="page 2: cannot"):
        asyncio.run(call(tasks[1]))

    async def fake_serve_batch(task, *_):  # stands in for @serve.batch over a 3-page batch
        results = dep._run(tasks) if kind == "layout" else dep._run(tasks, [None] * 3)
        return results[tasks.index(task)]

    dep.batching = True
    setattr(dep, "_detect_batch" if kind == "layout" else "_read_batch", fake_serve_batch)
    assert asyncio.run(call(tasks[2])) == f"{what} 3"
    with pytest.raises(ValueError, match="page 2"):
        asyncio.run(call(tasks[1]))


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
    app = app_builder({"config_path": str(path), "config": {"serve": {"served_ocr_concurrency": 3}}})
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
    assert app.import_path == "graph.builder:app_builder"
    assert {d.name for d in app.deployments} == set(DEPLOYMENT_NAMES)
    large = next(d for d in app.deployments if d.name == "LargeReader")
    assert large.autoscaling_config["min_replicas"] == 0
    assert raw["grpc_options"]["grpc_servicer_functions"] == [GRPC_SERVICER]
    assert raw["http_options"]["host"] == "127.0.0.1"
    cfg = load_config(REPO / "configs" / "serve.yaml")  # the CLI reads the same file
    assert cfg.serve.served_ocr_concurrency == raw["applications"][0]["args"]["config"]["serve"]["served_ocr_concurrency"]
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
                               route="text_layer", confidence=1.0, level=1, cells=None)],
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
    from clients.protos import pagerouter_pb2 as pb

    assert proto_model.document_from_proto(pb.Document.FromString(wire)) == doc


def test_generated_stubs_match_the_proto(tmp_path):
    """The committed stubs are what scripts/gen_protos.sh generates from the .proto."""
    out = tmp_path / "gen"
    out.mkdir()
    subprocess.run(
        [sys.executable, "-m", "grpc_tools.protoc", "-I", str(REPO), f"--python_out={out}",
         f"--grpc_python_out={out}", str(REPO / "clients/protos/pagerouter.proto")],
        check=True, capture_output=True, timeout=60,
    )
    for name in ("pagerouter_pb2.py", "pagerouter_pb2_grpc.py"):
        assert (out / "clients/protos" / name).read_text() == (REPO / "clients/protos" / name).read_text(), name


# -- HTTP input parsing, CLI ----------------------------------------------------------------
def test_multipart_parser_reads_file_and_fields():
    from deployments.http_input import ApiError, _parse_multipart

    boundary = "XyZ"
    body = (
        f"--{boundary}\r\nContent-Disposition: form-data; name=\"pages\"\r\n\r\n1-2\r\n"
        f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.pdf\"\r\n"
        f"Content-Type: application/pdf\r\n\r\n"
    ).encode() + b"%PDF-1.7\r\n\x00\xff binary" + f"\r\n--{boundary}--\r\n".encode()
    data, name, fields = _parse_multipart(f"multipart/form-data; boundary={boundary}", body)
    assert data == b"%PDF-1.7\r\n\x00\xff binary" and name == "a.pdf" and fields == {"pages": "1-2"}
    with pytest.raises(ApiError) as err:
        _parse_multipart("multipart/form-data", body)
    assert err.value.status == 400


def test_unexpected_http_error_has_the_documented_shape():
    """A bug (any exception) becomes a 500 `internal` in the one error shape, no traceback."""
    from fastapi import FastAPI
    from fastapi.testclient import TestClient

    from deployments.http_input import ApiError
    from deployments.ingress import install_error_handlers

    api = FastAPI()
    install_error_handlers(api)

    @api.get("/boom")
    async def boom():
        def deep():
            raise KeyError("page_bytes")

        deep()

    @api.get("/bad")
    async def bad():
        raise ApiError(400, "bad_pages", "x.pdf: page 0 requested")

    with TestClient(api, raise_server_exceptions=False) as client:
        r = client.get("/boom")
        assert r.status_code == 500
        err = r.json()["error"]
        assert set(err) == {"code", "message", "request_id"} and err["code"] == "internal" and err["request_id"]
        assert "KeyError" in err["message"] and "page_bytes" in err["message"]
        assert "Traceback" not in r.text and "deep()" not in r.text
        assert client.get("/bad").json()["error"]["code"] == "bad_pages"
        missing = client.get("/nowhere")
        assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"


class FakeGrpcContext:
    def __init__(self):
        self.code = self.details = None
        self.trailing = []

    def set_code(self, code):
        self.code = code

    def set_details(self, details):
        self.details = details

    def set_trailing_metadata(self, md):
        self.trailing = list(md)


def test_single_page_below_one_is_refused_not_read_as_a_range():
    """Page -3 must not reach parse_pages as "-3" (the range 1-3, i.e. page 1)."""
    import asyncio

    import grpc
    from fastapi import FastAPI
    from fastapi.testclient import TestClient

    from clients.protos import pagerouter_pb2 as pb
    from deployments.ingress import IngressCore, install_error_handlers

    # No stage handles: a refused page never reaches the graph (a call would fail with 500).
    core = IngressCore(PagerouterConfig().model_dump(), None, None, None, None, local=True)
    ctx = FakeGrpcContext()
    reply = asyncio.run(core.ConvertPage(pb.PageRequest(data=b"%PDF-1.7", filename="a.pdf", page=-3), ctx))
    assert ctx.code == grpc.StatusCode.INVALID_ARGUMENT and ("error-code", "bad_pages") in ctx.trailing
    assert "a.pdf" in ctx.details and "page -3" in ctx.details
    assert not reply.HasField("page") and reply.request_id

    api = FastAPI()
    install_error_handlers(api)

    api.router.add_route("/v1/pages", core.convert_page_http, methods=["POST"])  # gets the Request

    with TestClient(api, raise_server_exceptions=False) as client:
        for raw, code in (("-3", "bad_pages"), ("0", "bad_pages"), ("two", "bad_request")):
            r = client.post(f"/v1/pages?page={raw}&filename=a.pdf", content=b"%PDF-1.7")
            assert r.status_code == 400 and r.json()["error"]["code"] == code, r.text
        assert "a.pdf: page -3" in client.post("/v1/pages?page=-3&filename=a.pdf", content=b"x").json()["error"]["message"]


def _triage_items(pages: int | None):
    """What the Triage deployment streams: a head, then `pages` text pages (None: endless)."""
    import itertools

    from deployments.items import DocumentHead
    from pagerouter.pipeline import TriageOutcome

    count = pages or 10**6
    yield DocumentHead(Document(source="x.pdf", page_count=count), list(range(1, count + 1)))
    numbers = itertools.count(1) if pages is None else range(1, pages + 1)
    for n in numbers:
        yield TriageOutcome(Page(number=n, status="ok", route="text_layer"))


class FakeTriageStream:
    """Stands in for the Triage deployment's response stream (a DeploymentResponseGenerator)."""

    def __init__(self, items):
        self.items, self.cancelled, self.served = iter(items), False, 0

    def __aiter__(self):
        return self

    async def __anext__(self):
        try:
            item = next(self.items)
        except StopIteration:
            raise StopAsyncIteration from None
        self.served += 1
        return item

    def cancel(self):
        self.cancelled = True


class FakeTriageHandle:
    def __init__(self, stream: FakeTriageStream):
        self.stream = stream
        self.outcomes = self

    def options(self, stream: bool):
        assert stream
        return self

    def remote(self, *args):
        return self.stream


def test_ingress_cancels_the_triage_stream_when_its_consumer_goes_away():
    """A client that hangs up mid-stream must stop Triage, not leave it walking the document."""
    import asyncio

    from deployments.ingress import IngressCore

    def core(stream):
        return IngressCore(PagerouterConfig().model_dump(), FakeTriageHandle(stream), None, None, None, local=True)

    async def hang_up_after_two_lines(stream):
        response = await core(stream)._stream_http(b"%PDF", "x.pdf", None, None, "rid")
        lines = response.body_iterator
        got = [await lines.__anext__(), await lines.__anext__()]
        await lines.aclose()  # what Starlette's finalisation does when the client is gone
        return got

    endless = FakeTriageStream(_triage_items(None))
    got = asyncio.run(hang_up_after_two_lines(endless))
    assert all(b'"type":"page"' in line for line in got)
    assert endless.cancelled and endless.served < 100

    finished = FakeTriageStream(_triage_items(3))  # consumed to the end: nothing to cancel
    doc = asyncio.run(core(finished).collect(b"%PDF", "x.pdf", None, None))
    assert [p.number for p in doc.pages] == [1, 2, 3] and not finished.cancelled
    from deployments.items import InputProblem

    problem = FakeTriageStream([InputProblem("bad_input", "x.pdf: not a PDF", "x.pdf")])
    assert asyncio.run(core(problem).collect(b"x", "x.pdf", None, None)).code == "bad_input"
    assert not problem.cancelled


def test_internal_message_drops_remote_tracebacks():
    from deployments.http_input import internal_message

    class FakeRayTaskError(Exception):  # shaped like ray.exceptions.RayTaskError: str() is a traceback
        def __init__(self, cause):
            super().__init__("Traceback (most recent call last):\n  File x.py, line 1\nValueError: bad")
            self.cause = cause

    msg = internal_message(FakeRayTaskError(ValueError("bad page image\nsecond line")))
    assert msg.startswith("internal error (ValueError: bad page image)") and "Traceback" not in msg
    assert "\n" not in internal_message(RuntimeError("a\nb")) and "RuntimeError" in internal_message(RuntimeError())


def test_public_config_redacts_secrets():
    from deployments.http_input import public_config

    out = public_config(PagerouterConfig())
    assert out["serve"]["http_port"] == 8000

    class Fake:
        def model_dump(self, mode):
            return {"vlm": {"api_key": "sk-123", "url": "http://x"}, "password": ""}

    assert public_config(Fake()) == {"vlm": {"api_key": "***", "url": "http://x"}, "password": ""}


def test_serve_command_refuses_a_busy_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        r = subprocess.run([sys.executable, "-m", "clients.cli", "serve", "--http-port", str(port)],
                           cwd=REPO, capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "already in use" in r.stderr and "Traceback" not in r.stderr


def test_client_convert_reports_unreachable_server(mixed_pdf):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    r = subprocess.run([sys.executable, "-m", "clients.cli", "client", "convert", str(mixed_pdf), "--url",
                        f"http://127.0.0.1:{port}", "--timeout", "5"], cwd=REPO, capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 2 and "cannot reach the server" in r.stderr and "Traceback" not in r.stderr
