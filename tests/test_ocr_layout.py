"""Layout stage (rapid-layout CDLA), orientation trial and the order of its regions."""

from __future__ import annotations

import pickle

import pymupdf
import pytest

from pagerouter.bench import synth
from pagerouter.config.ocr import OcrConfig
from pagerouter.flow.engines import build_engine
from pagerouter.model import TriageDecision
from pagerouter.ocr.layout_none import NoLayoutEngine
from pagerouter.ocr.layout_rapid import RapidLayoutEngine
from pagerouter.ocr.regions import upright
from pagerouter.ocr.task import make_ocr_task
from pagerouter.common.stages import LayoutEngine

LETTER = [
    "Scanned letter from the archive",
    "Dear reader, this page is a picture of text.",
    "It has no text layer at all, so it must be read",
    "by optical character recognition on the CPU.",
]


@pytest.fixture(scope="module")
def cfg() -> OcrConfig:
    return OcrConfig()


@pytest.fixture(scope="module")
def layout(cfg) -> RapidLayoutEngine:
    return build_engine("layout", cfg)


def task_for(doc, cfg, i=0, decision=None):
    return make_ocr_task(doc[i], i + 1, "layout.pdf", decision or TriageDecision(route="ocr"), [], cfg)


# reading order (pure geometry) lives in tests/test_reading_order.py


# ---- layout engine -------------------------------------------------------------------------


def test_factory_builds_a_layout_engine(layout, cfg):
    assert isinstance(layout, LayoutEngine) and layout.name == "rapid_layout" and "cdla" in layout.version
    none_cfg = cfg.model_copy(deep=True)
    none_cfg.layout.kind = "none"
    assert isinstance(build_engine("layout", none_cfg), NoLayoutEngine)


@pytest.mark.slow
def test_regions_of_a_two_column_page_in_reading_order(layout, cfg):
    doc = pymupdf.open()
    synth.add_text_page(doc, [synth.LOREM] * 4, title="Quarterly routing report", columns=2)
    task = task_for(doc, cfg)
    res = layout.detect_batch([task])[0]
    assert res.rotation == 0 and res.engine == "rapid_layout"
    assert res.regions, "no regions on a page full of text"
    assert [r.order for r in res.regions] == list(range(len(res.regions)))
    h, w = task.image.shape[:2]
    for r in res.regions:  # in pixels of the task image, inside it
        assert 0 <= r.bbox[0] < r.bbox[2] <= w and 0 <= r.bbox[1] < r.bbox[3] <= h
    title = [r for r in res.regions if r.kind == "title"]
    assert title and res.regions.index(title[0]) == 0
    pickle.loads(pickle.dumps(res))  # crosses stage (process) boundaries


@pytest.mark.slow
@pytest.mark.parametrize("rotate", [0, 90, 180, 270])
def test_orientation_trial_finds_the_upright_rotation(layout, cfg, rotate):
    doc = pymupdf.open()
    synth.add_scanned_page(doc, LETTER, noise=0.04, rotate=rotate, seed=7)
    task = task_for(doc, cfg)
    res = layout.detect_batch([task])[0]
    assert res.rotation == (360 - rotate) % 360
    ev = res.evidence[0]
    assert ev.name == "orientation" and ev.score == res.rotation and f"rotate {res.rotation}" in ev.reason
    # regions are in pixels of the upright image
    h, w = upright(task.image, res.rotation).shape[:2]
    assert h > w
    for r in res.regions:
        assert r.bbox[2] <= w + 1 and r.bbox[3] <= h + 1


def test_blank_page_gives_no_regions_and_runs_no_model(layout, cfg):
    doc = pymupdf.open()
    synth.add_blank_page(doc)
    res = layout.detect_batch([task_for(doc, cfg)])[0]
    assert res.regions == [] and res.rotation == 0


def test_mixed_page_regions_are_the_triage_picture_regions(layout, cfg):
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_image(pymupdf.Rect(100, 200, 300, 300), stream=synth.text_image(["Picture"], size=(200, 100), dpi=100))
    decision = TriageDecision(route="mixed", ocr_regions=[(100, 200, 300, 300)])
    task = task_for(doc, cfg, decision=decision)
    res = layout.detect_batch([task])[0]
    assert len(res.regions) == 1 and res.rotation == 0
    x0, y0, x1, y1 = res.regions[0].bbox
    assert abs(x0 / task.scale - 100) < 1 and abs(y1 / task.scale - 300) < 1


def test_orientation_can_be_switched_off(cfg):
    off = cfg.model_copy(deep=True)
    off.orientation.enabled = False
    off.layout.kind = "none"
    eng = build_engine("layout", off)
    doc = pymupdf.open()
    synth.add_scanned_page(doc, LETTER, rotate=90)
    res = eng.detect_batch([task_for(doc, off)])[0]
    assert res.rotation == 0 and res.regions == []


# ---- config --------------------------------------------------------------------------------


def test_render_targets_merge_with_defaults_and_typos_fail():
    from pydantic import ValidationError

    from pagerouter.config import load_config

    c = load_config(overrides={"ocr": {"render_targets": {"rapidocr": {"longest_side_px": 1600}}}})
    assert c.ocr.render_target("rapidocr").longest_side_px == 1600
    assert c.ocr.render_target("tesseract").dpi == 300  # other engines keep their defaults
    assert c.ocr.render_target("olmocr").longest_side_px == 1288
    with pytest.raises(ValidationError, match="render_targets lacks an entry for rapid"):
        load_config(overrides={"ocr": {"small_reader": {"render_engine": "rapid"}}})
    with pytest.raises(ValidationError):
        load_config(overrides={"ocr": {"small_reader": {"kind": "paddle"}}})
    with pytest.raises(ValidationError):
        load_config(overrides={"ocr": {"scripts": {"table": {"Latin": {"tesseract_langs": "eng", "rapidocr": True, "typo": 1}}}}})


# ---- device (onnxruntime execution provider) -----------------------------------------------
# This machine's onnxruntime has no CUDA provider, so only the CPU side and the decision logic
# run here; that `cuda` gives the same regions on a GPU is NOT tested here (needs a GPU box).


def _device_cfg(device: str) -> OcrConfig:
    c = OcrConfig()
    c.layout.device = device
    return c


def test_layout_device_cpu_and_auto_give_identical_regions_on_a_cpu_only_machine(cfg):
    import onnxruntime as ort

    assert "CUDAExecutionProvider" not in ort.get_available_providers(), "this test expects a CPU-only onnxruntime"
    doc = pymupdf.open()
    synth.add_text_page(doc, [synth.LOREM] * 3, title="Device check", columns=2)
    task = task_for(doc, cfg)
    results = {}
    for device in ("cpu", "auto"):
        eng = build_engine("layout", _device_cfg(device))
        assert eng.provider == "CPUExecutionProvider" and eng.version.endswith("on CPUExecutionProvider")
        results[device] = [(r.kind, r.bbox, r.score, r.order) for r in eng.detect_batch([task])[0].regions]
    assert results["cpu"], "no regions on a page full of text"
    assert results["cpu"] == results["auto"]


def test_layout_device_cuda_without_the_cuda_provider_fails_naming_the_providers():
    import onnxruntime as ort

    with pytest.raises(RuntimeError) as err:
        build_engine("layout", _device_cfg("cuda"))
    msg = str(err.value)
    assert "CUDAExecutionProvider" in msg and "onnxruntime-gpu" in msg
    assert str(list(ort.get_available_providers())) in msg


def test_layout_device_is_validated():
    from pydantic import ValidationError

    from pagerouter.config import load_config

    assert load_config(overrides={"ocr": {"layout": {"device": "auto"}}}).ocr.layout.device == "auto"
    with pytest.raises(ValidationError):
        load_config(overrides={"ocr": {"layout": {"device": "gpu"}}})


class _FakeSession:
    def __init__(self, providers):
        self._providers = providers

    def get_providers(self):
        return self._providers


def _fake_rapid_layout(monkeypatch, seen: list, session_providers: list[str]):
    """Replace rapid_layout.RapidLayout by a stub recording its engine_cfg, whose ORT session
    reports `session_providers`."""
    import types

    import rapid_layout

    class FakeRapidLayout:
        def __init__(self, **kw):
            seen.append(kw["engine_cfg"])
            self.session = types.SimpleNamespace(session=_FakeSession(session_providers))

    monkeypatch.setattr(rapid_layout, "RapidLayout", FakeRapidLayout)


def test_layout_device_asks_rapid_layout_for_cuda_only_when_onnxruntime_offers_it(monkeypatch):
    import onnxruntime as ort

    seen: list = []
    cuda_and_cpu = ["CUDAExecutionProvider", "CPUExecutionProvider"]
    # an onnxruntime-gpu install whose CUDA provider starts
    monkeypatch.setattr(ort, "get_available_providers", lambda: cuda_and_cpu)
    _fake_rapid_layout(monkeypatch, seen, cuda_and_cpu)
    for device in ("auto", "cuda"):
        eng = build_engine("layout", _device_cfg(device))
        assert eng.provider == "CUDAExecutionProvider" and eng.version.endswith("on CUDAExecutionProvider")
    eng = build_engine("layout", _device_cfg("cpu"))
    assert seen == [{"use_cuda": True}, {"use_cuda": True}, {"use_cuda": False}]  # use_cuda always explicit

    # onnxruntime lists CUDA but the session falls back to CPU (CUDA/cuDNN libraries missing)
    seen.clear()
    _fake_rapid_layout(monkeypatch, seen, ["CPUExecutionProvider"])
    assert build_engine("layout", _device_cfg("auto")).provider == "CPUExecutionProvider"  # auto accepts it
    with pytest.raises(RuntimeError, match=r"runs on \['CPUExecutionProvider'\].*failed to start"):
        build_engine("layout", _device_cfg("cuda"))
