"""The OCR route's speed levers (issue 23) keep the reading: each lever's decision, and the
text read with it equal to the text read without it."""

from __future__ import annotations

import numpy as np
import pymupdf
import pytest

from pagerouter.bench import synth
from pagerouter.config.ocr import OcrConfig
from pagerouter.ocr.raster import ink_bbox, render_page
from pagerouter.ocr.reader_rapidocr import RapidOcrReader
from pagerouter.ocr.text_stats import char_error_rate as cer

LINES = [
    "Invoice 2024-117 from the harbour office",
    "Total due 1,250.00 EUR by 14 June",
    "Page 3 of 9",
]


def _scan(lines=LINES, **kw) -> np.ndarray:
    """A4 scan with a few lines near the top-left (most of the page is white), as the reader's render."""
    doc = pymupdf.open()
    synth.add_scanned_page(doc, lines, **kw)
    img, _zoom = render_page(doc[0], OcrConfig().render_target("rapidocr"))
    return img


@pytest.fixture(scope="module")
def readers():
    on = OcrConfig()
    off = OcrConfig()
    off.small_reader.det_crop_to_ink = False
    return RapidOcrReader(on), RapidOcrReader(off)


def test_ink_bbox_bounds_the_marks_and_ignores_speckles():
    img = np.full((400, 300, 3), 255, np.uint8)
    assert ink_bbox(img, 225, 0) is None
    img[100:120, 50:200] = 0  # a "line"
    img[300:306, 250:254] = 180  # a small faint mark (a page number's dot) still counts
    rng = np.random.default_rng(0)
    ys, xs = rng.integers(0, 400, 40), rng.integers(0, 300, 40)
    img[ys, xs] = 0  # isolated single-pixel speckles do not stretch the box... unless on the marks
    x0, y0, x1, y1 = ink_bbox(img, 225, 8)
    assert x0 <= 42 and y0 <= 92 and x1 >= 262 and y1 >= 314
    assert x0 >= 36 and y0 >= 84 and x1 <= 272 and y1 <= 320  # speckles elsewhere left out
    # colour counts: yellow print is dark in its blue channel
    img2 = np.full((200, 200, 3), 255, np.uint8)
    img2[50:60, 50:150] = (255, 255, 0)
    assert ink_bbox(img2, 225, 0) == (48, 48, 152, 60)


def _spy_detector_inputs(reader):
    """Record the shape of every input the reader's detector network gets."""
    shapes = []
    session = reader._det.session

    class Spy:
        def __call__(self, x):
            shapes.append(tuple(x.shape[2:]))
            return session(x)

        def __getattr__(self, name):
            return getattr(session, name)

    reader._det.session = Spy()
    return shapes, lambda: setattr(reader._det, "session", session)


def test_mostly_white_page_is_detected_in_its_ink_window_with_the_same_text(readers):
    on, off = readers
    img = _scan(noise=0.02, seed=5)
    h, w = img.shape[:2]
    shapes, undo = _spy_detector_inputs(on)
    try:
        got_on = on.read_image_lines(img, "Latin")
    finally:
        undo()
    shapes_off, undo = _spy_detector_inputs(off)
    try:
        got_off = off.read_image_lines(img, "Latin")
    finally:
        undo()
    # three lines on A4: the detector saw a window of a fifth of the whole page's input or less
    (wh, ww), (fh, fw) = shapes[0], shapes_off[0]
    assert wh % 32 == 0 and ww % 32 == 0
    assert wh * ww < 0.2 * fh * fw, (shapes, shapes_off)
    assert [ln.text for ln in got_on] == [ln.text for ln in got_off]
    assert cer("\n".join(LINES), "\n".join(ln.text for ln in got_on)) < 0.03
    # boxes come back in the page's pixels, where the whole-page detection puts them
    assert len(got_on) == len(got_off)
    for a, b in zip(got_on, got_off):
        assert np.allclose(a.bbox, b.bbox, atol=8), (a.bbox, b.bbox)
    assert min(ln.bbox[0] for ln in got_on) > 0.05 * w  # not at the window's corner


def test_page_inked_to_its_margins_or_crop_off_is_detected_whole(readers):
    on, off = readers
    img = np.full((2000, 1400, 3), 255, np.uint8)
    img[30:1970:40, 30:1370] = 0  # ink from margin to margin
    op = {"preprocess": {"ratio_h": 1.0, "ratio_w": 1.0}}
    assert on._detect_in_ink_window(img, dict(op), 1408) is None
    img[:] = 255
    img[100:120, 100:300] = 0
    assert on._detect_in_ink_window(img, dict(op), 1408) is not None  # a small window pays
    assert off._detect_in_ink_window(img, dict(op), 1408) is None  # det_crop_to_ink false
    # an image RapidOCR rescaled first is detected whole (the window would be at the wrong scale)
    assert on._detect_in_ink_window(img, {"preprocess": {"ratio_h": 0.5, "ratio_w": 0.5}}, 1408) is None


def test_lone_page_number_below_the_text_is_still_detected(readers):
    """The lowest mark sits at the window's edge: the margin gives the detector its context
    (with 32 px the footer "7" of this page was lost)."""
    on, off = readers
    paras = [f"{w} paragraph talks about routing pages to cheap readers and keeping the cost of reading low."
             for w in ("Alpha", "Bravo", "Charlie", "Delta", "Echo", "Foxtrot", "Golf", "Hotel", "India", "Juliet",
                       "Kilo", "Lima", "Mike", "November")]
    doc = pymupdf.open()
    synth.add_text_page(doc, paras, title="Two column report", columns=2, header="pagerouter sample", footer="7")
    img, _zoom = render_page(doc[0], OcrConfig().render_target("rapidocr"))
    got_on = [ln.text for ln in on.read_image_lines(img, "Latin")]
    got_off = [ln.text for ln in off.read_image_lines(img, "Latin")]
    assert "7" in got_off
    assert got_on == got_off


def test_bench_scan_reads_the_same_in_its_window(readers, tmp_path):
    """`pagerouter bench`'s generated scan where a 64 px margin moved a box edge 2 px and lost
    the space in "rapid glacier." (window context matters): read as the whole page reads it."""
    from pagerouter.bench.corpus import generate

    corpus = generate(tmp_path)  # the bench's default corpus (seed 7)
    f = next(f for f in corpus.files if f.path.name == "mixed-002.pdf")
    truth = f.truth[3].text
    on, off = readers
    with pymupdf.open(f.path) as doc:
        img, _zoom = render_page(doc[3], OcrConfig().render_target("rapidocr"))
    got_on = " ".join(ln.text for ln in on.read_image_lines(img, "Latin"))
    got_off = " ".join(ln.text for ln in off.read_image_lines(img, "Latin"))
    assert "rapid glacier." in truth and "rapid glacier." in got_off
    assert got_on == got_off


def test_the_library_session_layout_our_options_rely_on():
    """`use_our_options` rebuilds a model's session from what the libraries expose: the model's
    `.session` (their OrtInferSession) holding an onnxruntime InferenceSession in `.session`, which
    keeps its model file in `_model_path`. If a RapidOCR, rapid-layout or onnxruntime release moves
    any of these, this fails here instead of our sessions quietly spinning again."""
    from onnxruntime import InferenceSession
    from rapid_layout import RapidLayout
    from rapidocr import RapidOCR

    engine = RapidOCR(params={"Global.log_level": "warning"})
    for model in (engine._load_det_model(), engine._load_rec_model(), engine._load_cls_model(), RapidLayout()):
        session = model.session.session
        assert isinstance(session, InferenceSession), type(model)
        assert session._model_path and session._model_path.endswith(".onnx"), type(model)


def _spinning(infer_session) -> str | None:
    """The allow_spinning entry of an engine's onnxruntime session (None: the library's default)."""
    opts = infer_session.session.get_session_options()
    try:
        return opts.get_session_config_entry("session.intra_op.allow_spinning")
    except RuntimeError:  # no entry set
        return None


def test_our_sessions_do_not_spin_and_a_bare_rapidocr_keeps_its_defaults():
    """onnxruntime threads spinning between parallel sections stole the second core from the rest
    of the page (`ocr.onnx_thread_spinning`, ocr/onnx_sessions.py): every session our engines
    build has it off, one built outside them (the benchmark's bare RapidOCR, a bare RapidLayout),
    before or after ours, is untouched, and the setting turns it back on."""
    from rapid_layout import RapidLayout
    from rapidocr import RapidOCR

    from pagerouter.ocr.layout_rapid import RapidLayoutEngine
    from pagerouter.triage.layer_proof import _Recogniser

    before = RapidOCR(params={"Global.log_level": "warning"})
    cfg = OcrConfig()
    reader, layout, proof = RapidOcrReader(cfg), RapidLayoutEngine(cfg), _Recogniser(cfg)
    sessions = [reader._det.session, reader.engine.text_rec.session, layout.model.session,
                layout.orientation._det.session, layout.orientation._cls.session, proof.rec.session]
    assert [_spinning(s) for s in sessions] == ["0"] * 6
    bare = RapidOCR(params={"Global.log_level": "warning"})
    assert _spinning(before._load_det_model().session) is None
    assert _spinning(bare._load_det_model().session) is None
    assert _spinning(bare._load_rec_model().session) is None
    assert _spinning(RapidLayout().session) is None
    # the library classes are the libraries' own: nothing of theirs is replaced for the process
    from rapid_layout.inference_engine.onnxruntime.main import OrtInferSession as LayoutSession
    from rapidocr.inference_engine.onnxruntime.main import OrtInferSession as OcrSession

    for owner in (OcrSession, LayoutSession):
        assert vars(owner)["_init_sess_opts"].__func__.__module__ == owner.__module__
    spinning = RapidOcrReader(OcrConfig.model_validate({"onnx_thread_spinning": True}))
    assert _spinning(spinning._det.session) == "1"
    # the same text either way
    img = _scan()
    text = [ln.text for ln in reader.read_image_lines(img)]
    assert [ln.text for ln in spinning.read_image_lines(img)] == text
    assert cer("\n".join(LINES), "\n".join(text)) < 0.05, text


def _threads(infer_session) -> int:
    """The intra-op threads of an engine's onnxruntime session (0: onnxruntime's own, one per core)."""
    return infer_session.session.get_session_options().intra_op_num_threads


def test_a_workers_share_of_the_cores_sets_its_sessions_threads_and_not_the_text():
    """Workers side by side (two batch jobs, two Ray pool actors on two cores) each ran a thread
    per core in every model session and took turns on the cores (`ocr.onnx_threads`,
    `with_core_share`): a worker's share sets the threads of every session our engines build, an
    explicit `onnx_threads` or the reader's own `small_reader.threads` wins, a process that
    shares nothing keeps onnxruntime's default, and the reading is the same."""
    from pagerouter.ocr.layout_rapid import RapidLayoutEngine
    from pagerouter.ocr.onnx_sessions import with_core_share
    from pagerouter.triage.layer_proof import _Recogniser

    def sessions(cfg):
        reader, layout, proof = RapidOcrReader(cfg), RapidLayoutEngine(cfg), _Recogniser(cfg)
        return reader, [reader._det.session, reader.engine.text_rec.session, layout.model.session,
                        layout.orientation._det.session, layout.orientation._cls.session, proof.rec.session]

    whole, whole_sessions = sessions(OcrConfig())
    assert [_threads(s) for s in whole_sessions] == [0] * 6
    half, half_sessions = sessions(with_core_share(OcrConfig(), 0.5))
    assert [_threads(s) for s in half_sessions] == [1] * 6
    assert [_threads(s) for s in sessions(with_core_share(OcrConfig(), 2.7))[1]] == [2] * 6
    assert with_core_share(OcrConfig.model_validate({"onnx_threads": 3}), 1).onnx_threads == 3
    own = sessions(with_core_share(OcrConfig.model_validate({"small_reader": {"threads": 2}}), 1))[1]
    assert [_threads(s) for s in own] == [2, 2, 1, 1, 1, 2]  # the reader's own threads; layout the share
    img = _scan()
    text = [ln.text for ln in whole.read_image_lines(img)]
    assert [ln.text for ln in half.read_image_lines(img)] == text
    assert cer("\n".join(LINES), "\n".join(text)) < 0.05, text
