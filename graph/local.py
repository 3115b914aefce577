"""Run the Serve graph in this process (Serve's local testing mode): the CLI's converter.

`pagerouter convert` goes through the very same deployments as the server, only without Ray,
HTTP or gRPC, so the CLI and the server cannot disagree. The private `_local_testing_mode`
flag of `serve.run` is wrapped here and nowhere else.
"""

from __future__ import annotations

import itertools
from pathlib import Path

from deployments.items import DocumentHead, DocumentTail, InputProblem
from pagerouter.config import PagerouterConfig
from pagerouter.inputs import InputError, open_source, read_input
from pagerouter.model import Document, Page
from pagerouter.pipeline import save_figures

from .builder import build_app

_HANDLES: dict[str, object] = {}
_COUNTER = itertools.count(1)


def run_in_process(cfg: PagerouterConfig):
    """The ingress handle of an in-process graph for `cfg` (built once per config per process)."""
    key = cfg.model_dump_json()
    if key not in _HANDLES:
        import logging

        from ray import serve

        # Local mode logs a line per replica at INFO: noise on the CLI's stderr.
        logging.getLogger("ray.serve").setLevel(logging.WARNING)
        app = build_app(cfg, local=True)  # a fresh app: one app object cannot be run twice
        name = f"pagerouter-local-{next(_COUNTER)}"
        # Never call serve.shutdown() after this: in 2.60 it would start a full Ray.
        _HANDLES[key] = serve.run(app, name=name, route_prefix=None, _local_testing_mode=True)
    return _HANDLES[key]


def convert_bytes_with_graph(
    data: bytes, name: str, cfg: PagerouterConfig, *, pages: str | None = None, password: str | None = None, on_head=None, on_page=None
) -> Document:
    handle = run_in_process(cfg)
    stream = handle.options(stream=True).convert_items.remote(data, name, password, pages)
    doc: Document | None = None
    for item in stream:
        if isinstance(item, InputProblem):
            raise InputError(item.source, item.detail or item.message, item.page)
        if isinstance(item, DocumentHead):
            doc = item.document
            if on_head is not None:
                on_head(item)
        elif isinstance(item, Page):
            assert doc is not None
            doc.pages.append(item)
            if on_page is not None:
                on_page(item)
        elif isinstance(item, DocumentTail):
            assert doc is not None
            doc.engines.update(item.engines)
    if doc is None:  # pragma: no cover - the ingress always yields a head or a problem
        raise InputError(name, "conversion produced nothing")
    return doc


def convert_with_graph(path: Path, cfg: PagerouterConfig, args, progress_cls) -> Document:
    """The CLI's converter: honours args.pages, args.password, args.images, args.quiet."""
    path = Path(path)
    data = read_input(path)
    password = getattr(args, "password", None)
    images_dir = getattr(args, "images", None)
    quiet = getattr(args, "quiet", False)
    src = open_source(data=data, name=str(path), password=password) if images_dir else None
    state: dict[str, object] = {}

    def on_head(head: DocumentHead) -> None:
        state["bar"] = progress_cls(path.name, len(head.numbers), not quiet)

    def on_page(page: Page) -> None:
        if src is not None and page.status != "failed":
            save_figures(src, page, Path(images_dir))
        state["bar"].step(page)  # type: ignore[attr-defined]

    try:
        return convert_bytes_with_graph(
            data, str(path), cfg, pages=getattr(args, "pages", None), password=password, on_head=on_head, on_page=on_page
        )
    finally:
        if "bar" in state:
            state["bar"].close()  # type: ignore[attr-defined]
        if src is not None:
            src.close()
