"""The systems `pagerouter bench` compares, one small class each behind the `System` protocol.

- `router`: the in-process `Converter` (triage -> text layer / OCR path -> checks -> escalation);
- `text_layer`: PyMuPDF `get_text()` of every page, trusting every layer;
- `rapidocr`: bare RapidOCR on a whole-page render of every page (the router's RapidOCR render
  size), no layout, no checks;
- `tesseract`: Tesseract (pytesseract) on a 300-DPI render of every page (the router's
  Tesseract render size);
- `pymupdf4llm`: pymupdf4llm's Markdown, with its own defaults (it OCRs pages it judges to need
  it with whatever engine it finds), when installed.

Each returns one `PageResult` per page: the text, the route it took, its seconds and, where the
system exposes them, seconds per stage.
"""

from __future__ import annotations

import contextlib
import io
import logging
import time
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
import pymupdf

from ..config import PagerouterConfig
from ..model import FURNITURE_ROLES
from .corpus import CorpusFile

ROUTER_STAGES = ("triage", "text_layer", "render", "layout", "read", "escalate")
"""The pipeline's per-page stages (a page's `timings` hold exactly these keys, one per stage)."""


@dataclass
class PageResult:
    file: str
    number: int
    text: str
    route: str
    seconds: float
    stages: dict[str, float] = field(default_factory=dict)
    status: str = "ok"
    error: str | None = None


class System(Protocol):
    name: str
    gpu_seconds: float  # seconds a tier of this system ran on a GPU (0 for CPU-only systems)

    def unavailable(self) -> str | None:
        """Why this system cannot run here (missing package or binary), or None."""

    def warm(self, pdf: bytes) -> None:
        """Load models and start workers on a throwaway document (not measured)."""

    def run(self, f: CorpusFile) -> list[PageResult]:
        """Read the selected pages of one file."""

    def close(self) -> None:
        """Stop workers and free models."""


def _render_gray(page: pymupdf.Page, zoom: float) -> np.ndarray:
    pix = page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), colorspace=pymupdf.csRGB, alpha=False)
    return np.frombuffer(pix.samples, dtype=np.uint8).reshape(pix.height, pix.width, 3)


class RouterSystem:
    name = "router"

    def __init__(self, cfg: PagerouterConfig):
        self.cfg = cfg
        self.conv = None
        self.gpu_seconds = 0.0

    def unavailable(self) -> str | None:
        return None

    def warm(self, pdf: bytes) -> None:
        from ..convert.converter import Converter

        self.conv = Converter(self.cfg)
        self.conv.convert(pdf, name="warm-up.pdf", wait="bulk")
        self.conv.warm()  # every isolation worker's models too, not only the one the warm-up page used

    def run(self, f: CorpusFile) -> list[PageResult]:
        try:
            doc = self.conv.convert(f.path, pages=",".join(map(str, f.pages)), wait="bulk")
        except Exception as exc:  # noqa: BLE001 - InputError and the like: the file's pages fail, the run goes on
            return [PageResult(f.path.name, n, "", "failed", 0.0, {}, "failed", f"{f.path.name}: page {n}: {exc}")
                    for n in f.pages]
        out = []
        for p in doc.pages:
            # VLM tiers are the GPU tiers of this project; the CPU vote records no attempts
            self.gpu_seconds += sum(a.seconds for a in p.attempts)
            stages = {k: v for k, v in p.timings.items()}
            text = "\n\n".join(b.text for b in p.blocks if b.role not in FURNITURE_ROLES and b.text)
            route = "failed" if p.status == "failed" else (p.route or "failed")
            out.append(PageResult(f.path.name, p.number, text, route,
                                  sum(p.timings.get(k, 0.0) for k in ROUTER_STAGES), stages, p.status, p.error))
        return out

    def close(self) -> None:
        if self.conv is not None:
            self.conv.close()
            self.conv = None


class TextLayerSystem:
    name = "text_layer"
    gpu_seconds = 0.0

    def unavailable(self) -> str | None:
        return None

    def warm(self, pdf: bytes) -> None:
        with pymupdf.open("pdf", pdf) as doc:
            for page in doc:
                page.get_text()

    def run(self, f: CorpusFile) -> list[PageResult]:
        out = []
        with pymupdf.open(f.path) as doc:
            for n in f.pages:
                t0 = time.perf_counter()
                text = doc[n - 1].get_text()
                out.append(PageResult(f.path.name, n, text, "text_layer", time.perf_counter() - t0))
        return out

    def close(self) -> None:
        pass


class _EveryPageOcr:
    """A bare engine on a render of every page: `_read(page)` gives (text, seconds per stage); a
    page the engine cannot read (e.g. "Image too large" on a huge page) counts as failed."""

    name = "ocr"

    def _read(self, page: pymupdf.Page) -> tuple[str, dict[str, float]]:
        raise NotImplementedError

    def run(self, f: CorpusFile) -> list[PageResult]:
        out = []
        with pymupdf.open(f.path) as doc:
            for n in f.pages:
                t0 = time.perf_counter()
                try:
                    text, stages = self._read(doc[n - 1])
                    out.append(PageResult(f.path.name, n, text, "ocr", time.perf_counter() - t0, stages))
                except Exception as exc:  # noqa: BLE001 - the page fails, the run goes on
                    out.append(PageResult(f.path.name, n, "", "failed", time.perf_counter() - t0, {}, "failed",
                                          f"{f.path.name}: page {n}: {self.name} failed: {exc}"))
        return out


class RapidOcrSystem(_EveryPageOcr):
    name = "rapidocr"
    gpu_seconds = 0.0

    def __init__(self, cfg: PagerouterConfig):
        self.target = cfg.ocr.render_targets.get("rapidocr")
        self.engine = None

    def unavailable(self) -> str | None:
        try:
            import rapidocr  # noqa: F401
        except ImportError as exc:
            return f"rapidocr is not installed ({exc})"
        return None

    def warm(self, pdf: bytes) -> None:
        from rapidocr import RapidOCR

        self.engine = RapidOCR(params={"Global.log_level": "warning"})
        logging.getLogger("RapidOCR").setLevel(logging.WARNING)
        with pymupdf.open("pdf", pdf) as doc:
            self._read(doc[0])

    def _zoom(self, page: pymupdf.Page) -> float:
        return self.target.zoom_for(page.rect.width, page.rect.height) if self.target else 170 / 72

    def _read(self, page: pymupdf.Page) -> tuple[str, dict[str, float]]:
        t0 = time.perf_counter()
        img = _render_gray(page, self._zoom(page))
        render = time.perf_counter() - t0
        res = self.engine(img)
        det, cls, rec = (list(res.elapse_list) + [None] * 3)[:3]
        stages = {"render": render, "detection": det or 0.0, "direction": cls or 0.0, "recognition": rec or 0.0}
        return "\n".join(res.txts or ()), stages

    def close(self) -> None:
        self.engine = None


class TesseractSystem(_EveryPageOcr):
    name = "tesseract"
    gpu_seconds = 0.0

    def __init__(self, cfg: PagerouterConfig):
        self.target = cfg.ocr.render_targets.get("tesseract")

    def unavailable(self) -> str | None:
        try:
            import pytesseract

            pytesseract.get_tesseract_version()
        except ImportError as exc:
            return f"pytesseract is not installed ({exc})"
        except Exception as exc:  # noqa: BLE001 - TesseractNotFoundError and friends
            return f"the tesseract binary is not usable ({exc})"
        return None

    def warm(self, pdf: bytes) -> None:
        with pymupdf.open("pdf", pdf) as doc:
            self._read(doc[0])

    def _read(self, page: pymupdf.Page) -> tuple[str, dict[str, float]]:
        import pytesseract
        from PIL import Image

        t0 = time.perf_counter()
        zoom = self.target.zoom_for(page.rect.width, page.rect.height) if self.target else 300 / 72
        img = Image.fromarray(_render_gray(page, zoom))
        render = time.perf_counter() - t0
        t1 = time.perf_counter()
        text = pytesseract.image_to_string(img, lang="eng")
        return text, {"render": render, "tesseract": time.perf_counter() - t1}

    def close(self) -> None:
        pass


@contextlib.contextmanager
def _quiet():
    """pymupdf4llm prints progress to stdout and through PyMuPDF's message stream; keep both out
    of the bench's output (PyMuPDF's destination is restored after)."""
    saved = getattr(pymupdf, "_g_out_message", None)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            pymupdf.set_messages(stream=io.StringIO())
            yield
    finally:
        if saved is not None:
            pymupdf._g_out_message = saved


class Pymupdf4llmSystem:
    name = "pymupdf4llm"
    gpu_seconds = 0.0

    def __init__(self):
        self.mod = None

    def unavailable(self) -> str | None:
        from pagerouter.common.pymupdf_setup import import_pymupdf4llm  # its layout mode, as a user gets it

        try:
            self.mod = import_pymupdf4llm()
        except ImportError as exc:
            return f"pymupdf4llm is not installed ({exc})"
        return None

    def warm(self, pdf: bytes) -> None:
        with pymupdf.open("pdf", pdf) as doc, _quiet():
            self.mod.to_markdown(doc, pages=[0], show_progress=False)

    def run(self, f: CorpusFile) -> list[PageResult]:
        out = []
        with pymupdf.open(f.path) as doc:
            for n in f.pages:
                t0 = time.perf_counter()
                try:  # one call per page: its own seconds per page; its chatter kept off our stdout
                    with _quiet():
                        text = self.mod.to_markdown(doc, pages=[n - 1], show_progress=False)
                    out.append(PageResult(f.path.name, n, text, "pymupdf4llm", time.perf_counter() - t0))
                except Exception as exc:  # noqa: BLE001
                    out.append(PageResult(f.path.name, n, "", "failed", time.perf_counter() - t0, {}, "failed",
                                          f"{f.path.name}: page {n}: pymupdf4llm failed: {exc}"))
        return out

    def close(self) -> None:
        pass


from . import SYSTEM_NAMES  # noqa: E402, F401 - kept here too: callers import it from this module


def make_system(name: str, cfg: PagerouterConfig) -> System:
    if name == "router":
        return RouterSystem(cfg)
    if name == "text_layer":
        return TextLayerSystem()
    if name == "rapidocr":
        return RapidOcrSystem(cfg)
    if name == "tesseract":
        return TesseractSystem(cfg)
    if name == "pymupdf4llm":
        return Pymupdf4llmSystem()
    raise ValueError(f"unknown system {name!r} (known: {', '.join(SYSTEM_NAMES)})")
