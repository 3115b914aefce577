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

`ocr.onnx_thread_spinning` (default false) applies to the models handed to `use_our_options`:
each engine hands over the models it built, and each model's session is built again from the
same file, providers and the library's own options, plus ours. Only those instances change: a
RapidOCR or RapidLayout built elsewhere in the process (the benchmark's bare RapidOCR baseline,
another library's) keeps the library's defaults, and the library classes are left as they are.
Building a model's session twice costs its load time once more (0.02 to 0.06 s a model here).
"""

from __future__ import annotations

import math

from ..config.ocr import OcrConfig

SPIN_ENTRIES = ("session.intra_op.allow_spinning", "session.inter_op.allow_spinning")


def with_core_share(cfg: OcrConfig, cores: float) -> OcrConfig:
    """`cfg` for a worker whose share of the machine is `cores` CPUs, when `onnx_threads` is 0
    (its own choice): floor(cores) threads per session, at least 1. Workers that each ran a
    thread per core (two batch jobs, or two Ray pool actors, on two cores) took turns on the
    cores at every parallel section of every model run."""
    if cfg.onnx_threads:
        return cfg
    return cfg.model_copy(update={"onnx_threads": max(1, math.floor(cores))})


def use_our_options(cfg: OcrConfig, *models) -> None:
    """Give each model's onnxruntime session `cfg`'s thread options: spinning, and
    `onnx_threads` intra-op threads where the library set none (`small_reader.threads`).

    A model is what RapidOCR (`TextDetector`, `TextRecognizer`, `TextClassifier`) or
    rapid-layout (`RapidLayout`) builds: its `.session` is the library's `OrtInferSession`,
    whose `.session` is the onnxruntime `InferenceSession` every run goes through. A model
    on another inference backend (rapid-layout on OpenVINO) has no onnxruntime session and
    is left as it is, as the libraries' sessions were before."""
    from onnxruntime import InferenceSession

    flag = "1" if cfg.onnx_thread_spinning else "0"
    for model in models:
        holder = model.session  # the library's OrtInferSession
        old = getattr(holder, "session", None)
        if not isinstance(old, InferenceSession):
            continue
        path = getattr(old, "_model_path", None)  # onnxruntime keeps the file it loaded
        if not path:
            raise RuntimeError(f"{type(model).__name__}'s onnxruntime session has no model path to rebuild it from")
        opts = old.get_session_options()  # the library's: threads, arena, optimisation level
        for key in SPIN_ENTRIES:
            opts.add_session_config_entry(key, flag)
        if cfg.onnx_threads and opts.intra_op_num_threads <= 0:
            opts.intra_op_num_threads = cfg.onnx_threads
        providers = old.get_providers()  # those that started: a failed CUDA stays failed
        provider_options = old.get_provider_options()
        holder.session = InferenceSession(path, sess_options=opts, providers=providers,
                                          provider_options=[provider_options.get(p, {}) for p in providers])


__all__ = ["SPIN_ENTRIES", "use_our_options", "with_core_share"]
