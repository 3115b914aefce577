"""Session options for the onnxruntime sessions our engines create (RapidOCR's detector,
recogniser and line classifier, rapid-layout's model), which neither library lets a caller set.

onnxruntime's worker threads spin after each parallel section, waiting for the next one. On a
two-core machine that spin steals the core the rest of the page needs: the Python between model
runs, the isolation worker triaging the next pages, the other model. Measured with
`pagerouter bench --systems router` (20 generated pages, 6 of them OCR'd), two runs each:

| onnxruntime threads | wall | CPU |
|---|---:|---:|
| spinning (the libraries' default) | 6.8, 6.9 s | 12.9, 13.2 s |
| not spinning | 5.7, 5.8 s | 9.7, 10.1 s |

`ocr.onnx_thread_spinning` (default false) applies to sessions built inside `our_sessions(cfg)`:
the engines build theirs there. A session built elsewhere in the process (the benchmark's bare
RapidOCR baseline, another library's) keeps the library's defaults.
"""

from __future__ import annotations

import contextvars
import threading
from contextlib import contextmanager

from ..config.ocr import OcrConfig

_SPIN: contextvars.ContextVar[bool | None] = contextvars.ContextVar("pagerouter_onnx_spin", default=None)
_PATCHED = False
_LOCK = threading.Lock()


def _wrap(owner: type) -> None:
    """`owner._init_sess_opts` (a staticmethod building the SessionOptions) also sets ours."""
    build = owner._init_sess_opts

    def init_sess_opts(*args, **kwargs):
        opts = build(*args, **kwargs)
        spin = _SPIN.get()
        if spin is not None:
            flag = "1" if spin else "0"
            opts.add_session_config_entry("session.intra_op.allow_spinning", flag)
            opts.add_session_config_entry("session.inter_op.allow_spinning", flag)
        return opts

    owner._init_sess_opts = staticmethod(init_sess_opts)


def _patch() -> None:
    global _PATCHED
    with _LOCK:
        if _PATCHED:
            return
        owners = []
        try:
            from rapidocr.inference_engine.onnxruntime.main import OrtInferSession as RapidOcrSession

            owners.append(RapidOcrSession)
        except ImportError:
            pass
        try:
            from rapid_layout.inference_engine.onnxruntime.main import OrtInferSession as LayoutSession

            owners.append(LayoutSession)
        except ImportError:
            pass
        for owner in owners:
            if callable(getattr(owner, "_init_sess_opts", None)):
                _wrap(owner)
        _PATCHED = True


@contextmanager
def our_sessions(cfg: OcrConfig):
    """Sessions created in this block (this thread or task) get `cfg`'s thread options."""
    _patch()
    token = _SPIN.set(cfg.onnx_thread_spinning)
    try:
        yield
    finally:
        _SPIN.reset(token)


__all__ = ["our_sessions"]
