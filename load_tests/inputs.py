"""The inputs of a load run: generated at start with pagerouter/bench/synth.py (or a sample file),
each with its weight, the request it is sent as and the answer it must get.

A bad input is not a failure when it gets its expected 4xx: it counts as `expected` under its
status and error code, so the report shows the server refused it the right way under load.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path

import pymupdf

from pagerouter.bench import synth

SMALL = (320.0, 220.0)  # small scans keep an OCR page around a second on 2 busy cores
PROSE = "Load test prose on a born-digital page: the text layer reads it at once, sentence after sentence. "


@dataclass(frozen=True)
class LoadInput:
    """One kind of request of the mix.

    `endpoint`: "pages" (POST /v1/pages, one page) or "convert" (POST /v1/convert, whole document).
    `expect_status`: the HTTP status it must get (200, or the 4xx of a bad input); `expect_code`
    the error code of that 4xx; `routes`: the page routes a 200 answer must show."""

    name: str
    data: bytes
    filename: str
    endpoint: str
    weight: int
    pages: int
    expect_status: int = 200
    expect_code: str = ""
    expect_grpc: str = "OK"
    page: int = 1
    routes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def bad(self) -> bool:
        return self.expect_status != 200


def _pdf_bytes(build) -> bytes:
    doc = pymupdf.open()
    build(doc)
    data = doc.tobytes()
    doc.close()
    return data


def _digital(doc, pages: int = 2) -> None:
    for i in range(pages):
        synth.add_text_page(doc, [f"Page {i + 1} of a born-digital report. " + PROSE * 3], title=f"Report {i + 1}")


def _scanned(doc) -> None:
    synth.add_scanned_page(doc, ["Invoice number 4711", "Total amount due 99 EUR"], size=SMALL, fontsize=14)


def default_mix(weights: dict[str, int] | None = None, sample: Path | None = None) -> list[LoadInput]:
    """The weighted mix: born-digital pages and documents, scanned pages, and two bad inputs
    (not a PDF; a page number past the end). `weights` overrides by name (0 drops one);
    `sample` adds a real file as a whole-document request."""
    digital = _pdf_bytes(_digital)
    scanned = _pdf_bytes(_scanned)
    mix = [
        LoadInput("digital_page", digital, "digital.pdf", "pages", 4, 1, page=2, routes=("text_layer",)),
        LoadInput("digital_doc", digital, "digital.pdf", "convert", 3, 2, routes=("text_layer",)),
        LoadInput("scanned_page", scanned, "scan.pdf", "pages", 2, 1, routes=("ocr",)),
        LoadInput("bad_not_pdf", b"this is not a PDF, just some bytes\n" * 8, "notes.pdf", "convert", 1, 0,
                  expect_status=422, expect_code="bad_input", expect_grpc="INVALID_ARGUMENT"),
        LoadInput("bad_page", digital, "digital.pdf", "pages", 1, 0, page=99, expect_status=422,
                  expect_code="bad_pages", expect_grpc="INVALID_ARGUMENT"),
    ]
    if sample is not None:
        with pymupdf.open(sample) as doc:
            n = doc.page_count
        mix.append(LoadInput("sample_doc", sample.read_bytes(), sample.name, "convert", 1, n))
    if weights:
        unknown = set(weights) - {m.name for m in mix}
        if unknown:
            raise SystemExit(f"load_tests: unknown input names in weights: {sorted(unknown)}")
        mix = [LoadInput(**{**m.__dict__, "weight": weights.get(m.name, m.weight)}) for m in mix]
    mix = [m for m in mix if m.weight > 0]
    if not mix:
        raise SystemExit("load_tests: every input has weight 0")
    return mix


def parse_weights(text: str | None) -> dict[str, int]:
    """`name=3,other=0` -> {"name": 3, "other": 0}."""
    out: dict[str, int] = {}
    for part in filter(None, (text or "").split(",")):
        name, _, value = part.partition("=")
        if not value.strip().isdecimal():
            raise SystemExit(f"load_tests: bad weight {part!r}: expected name=INTEGER")
        out[name.strip()] = int(value)
    return out


class Picker:
    """The mix as a repeating sequence: each input `weight` times per round, shuffled once by
    `seed`. One Picker is shared by all users of a generator, so any round of sum(weights)
    consecutive requests holds every input, and two runs send the same sequence."""

    def __init__(self, mix: list[LoadInput], seed: int = 12):
        self.sequence = [m for m in mix for _ in range(m.weight)]
        random.Random(seed).shuffle(self.sequence)
        self._n = 0

    def next(self) -> LoadInput:
        item = self.sequence[self._n % len(self.sequence)]
        self._n += 1
        return item
