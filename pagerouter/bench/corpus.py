"""Corpora for `pagerouter bench`: a generated mixed corpus with known text, and real PDFs.

The generated corpus is seeded and mixes, like a real archive, mostly born-digital pages with a
share of pages whose text layer cannot be trusted:

- `born_digital`: a text page (one or two columns); its text layer is the truth;
- `scan`: a full-page picture of text with no text layer at all;
- `lying_layer`: a scan with an invisible (render mode 3) OCR layer that says something else;
- `glyph_garbage`: visible text in an embedded font whose ToUnicode map was removed, so the
  layer extracts as glyph ids (what broken PDF producers ship).

Every page records the text a perfect reader produces and the route a router should take.
Real corpora have no truth: they give speed, route mix and cost, not error rates.
"""

from __future__ import annotations

import json
import os
import random
import sys
import textwrap
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pymupdf

from . import synth

KINDS = ("born_digital", "scan", "lying_layer", "glyph_garbage")
HARD_KINDS = ("lying_layer", "scan", "glyph_garbage")  # the order the hard share cycles through
EXPECTED_ROUTE = {"born_digital": "text_layer", "scan": "ocr", "lying_layer": "ocr", "glyph_garbage": "ocr"}
PAGES_PER_FILE = 5
A6 = (298.0, 420.0)  # the size of `short` pages: a quarter of the pixels of A4 to detect lines on

# A private word bank (no hyphens: a wrapped hyphen would make line-break joins ambiguous).
_ADJ = ("amber coastal dormant eastern fragile granite hollow inland jagged kinetic lunar marshy "
        "northern quiet rugged saline tidal upland vivid western yellow brittle copper dense "
        "early frozen gentle humid narrow porous rapid sandy").split()
_NOUN = ("aquifer basin cliff delta estuary glacier harbour island lagoon meadow orchard plateau "
         "quarry ravine terrace valley wetland ridge canyon dune reef spring canal ferry "
         "lighthouse mill granary kiln viaduct").split()
_VERB = ("absorbed bordered carried diverted eroded flooded guarded joined kept lined marked "
         "narrowed opened protected reshaped sheltered traced widened").split()
_AGENT = ("surveyors farmers pilots geologists masons archivists botanists cartographers "
          "engineers sailors traders weavers clerks auditors").split()
_TIME = ("after the thaw", "before the harvest", "during the long drought", "in early spring",
         "each autumn", "for three winters", "until the flood", "in March 1987", "by 14 June")


@dataclass
class PageTruth:
    kind: str
    text: str  # what a perfect reader gives (paragraphs separated by blank lines)
    expected_route: str


@dataclass
class CorpusFile:
    path: Path
    pages: list[int]  # 1-based pages to convert
    truth: list[PageTruth] | None = None  # per page of `pages`, for generated files


@dataclass
class Corpus:
    name: str
    files: list[CorpusFile] = field(default_factory=list)

    @property
    def page_count(self) -> int:
        return sum(len(f.pages) for f in self.files)

    @property
    def has_truth(self) -> bool:
        return bool(self.files) and all(f.truth is not None for f in self.files)


class _Words:
    def __init__(self, rng: random.Random):
        self.rng = rng

    def sentence(self) -> str:
        r = self.rng
        forms = (
            f"The {r.choice(_ADJ)} {r.choice(_NOUN)} {r.choice(_VERB)} the {r.choice(_ADJ)} {r.choice(_NOUN)}.",
            f"{r.choice(_AGENT).capitalize()} {r.choice(_VERB)} a {r.choice(_ADJ)} {r.choice(_NOUN)} {r.choice(_TIME)}.",
            f"{r.choice(_TIME).capitalize()}, the {r.choice(_AGENT)} {r.choice(_VERB)} {r.randint(2, 990)} {r.choice(_NOUN)}s.",
        )
        return r.choice(forms)

    def paragraph(self, n: int) -> str:
        return " ".join(self.sentence() for _ in range(n))


def composition(pages: int, born_digital_share: float) -> list[str]:
    """The kinds of `pages` pages: round(share * pages) born-digital, the rest cycling through
    the hard kinds (so every hard kind appears once there are three or more hard pages)."""
    born = max(0, min(pages, round(pages * born_digital_share)))
    return ["born_digital"] * born + [HARD_KINDS[i % len(HARD_KINDS)] for i in range(pages - born)]


def _born_digital(doc: pymupdf.Document, w: _Words, rng: random.Random, short: bool = False) -> str:
    title = f"Survey note {rng.randint(100, 999)}"
    if short:
        return synth.add_text_page(doc, [w.sentence(), w.sentence()], title=title, fontsize=9, size=A6)
    paras = [w.paragraph(rng.randint(2, 3)) for _ in range(rng.randint(3, 4))]
    return synth.add_text_page(doc, paras, title=title, columns=rng.choice((1, 1, 2)), fontsize=rng.choice((10, 11)))


def _scan_lines(w: _Words, rng: random.Random, short: bool = False) -> list[str]:
    if short:
        return textwrap.wrap(" ".join(w.sentence() for _ in range(2)), 40)
    return textwrap.wrap(" ".join(w.sentence() for _ in range(rng.randint(5, 7))), 64)


def _scan(doc: pymupdf.Document, w: _Words, rng: random.Random, short: bool = False, hidden: str | None = None) -> str:
    # scanner-like variety: resolution, noise, blur, a slight skew, PNG or JPEG
    return synth.add_scanned_page(
        doc, _scan_lines(w, rng, short), hidden_text=hidden, noise=rng.choice((0.01, 0.03, 0.05)),
        dpi=rng.choice((120, 150, 200)), blur=rng.random() < 0.3, skew_deg=round(rng.uniform(-0.8, 0.8), 2),
        fmt=rng.choice(("PNG", "JPEG")), seed=rng.randint(0, 10_000), **({"size": A6, "fontsize": 9} if short else {}),
    )


def _lying_layer(doc: pymupdf.Document, w: _Words, rng: random.Random, short: bool = False) -> str:
    # the hidden layer is plausible prose, just not what the picture shows
    hidden = "\n".join(_scan_lines(w, rng, short))
    return _scan(doc, w, rng, short, hidden=hidden)


def _glyph_garbage(doc: pymupdf.Document, w: _Words, rng: random.Random, short: bool = False) -> str:
    lines = _scan_lines(w, rng, short)
    size, fontsize = (A6, 9) if short else (synth.A4, 11)
    page = doc.new_page(width=size[0], height=size[1])
    y = 80.0
    for line in lines:
        page.insert_text((60, y), line, fontsize=fontsize, fontname="dejavu", fontfile=synth.DEJAVU)
        y += fontsize * 1.5
    return "\n".join(lines)


def _strip_tounicode(doc: pymupdf.Document) -> None:
    """Remove every font's ToUnicode map: the glyph_garbage pages' layer extracts as glyph ids
    (born-digital pages use the base-14 Helvetica, which needs no map and keeps its text)."""
    for xref in range(1, doc.xref_length()):
        if doc.xref_get_key(xref, "ToUnicode")[0] == "xref":
            doc.xref_set_key(xref, "ToUnicode", "null")


BUILDERS = {"born_digital": _born_digital, "scan": _scan, "lying_layer": _lying_layer, "glyph_garbage": _glyph_garbage}


def generate(outdir: Path, pages: int = 20, seed: int = 7, born_digital_share: float = 0.7,
             short: bool = False) -> Corpus:
    """Write the generated corpus (PDFs of up to PAGES_PER_FILE pages, in shuffled order) and
    its truth (truth.json) into `outdir`. `short` pages are A6 with two sentences (smoke tests)."""
    rng = random.Random(seed)
    kinds = composition(pages, born_digital_share)
    if "glyph_garbage" in kinds and not os.path.exists(synth.DEJAVU):
        kinds = ["scan" if k == "glyph_garbage" else k for k in kinds]  # no TTF to embed: a plain scan
    rng.shuffle(kinds)
    outdir.mkdir(parents=True, exist_ok=True)
    w = _Words(rng)
    corpus = Corpus("generated")
    for start in range(0, len(kinds), PAGES_PER_FILE):
        doc = pymupdf.open()
        truths = []
        for kind in kinds[start : start + PAGES_PER_FILE]:
            text = BUILDERS[kind](doc, w, rng, short)
            truths.append(PageTruth(kind, text, EXPECTED_ROUTE[kind]))
        _strip_tounicode(doc)
        path = outdir / f"mixed-{start // PAGES_PER_FILE + 1:03d}.pdf"
        doc.save(path, garbage=3, deflate=True)
        doc.close()
        corpus.files.append(CorpusFile(path, list(range(1, len(truths) + 1)), truths))
    (outdir / "truth.json").write_text(json.dumps(
        {"seed": seed, "born_digital_share": born_digital_share, "short": short,
         "files": [{"file": f.path.name, "pages": [asdict(t) for t in f.truth or []]} for f in corpus.files]},
        indent=1), encoding="utf-8")
    return corpus


def real_corpus(paths: list[Path], max_pages: int | None, name: str = "real") -> Corpus:
    """PDFs under `paths` (files or folders), at most `max_pages` pages in all, spread round-robin
    over the files (page 1 of every file first) so a capped run still sees every file."""
    files: list[Path] = []
    for p in paths:
        files += sorted(p.rglob("*.pdf")) if p.is_dir() else [p]
    counts = []
    for f in files:
        try:
            with pymupdf.open(f) as doc:
                counts.append(doc.page_count)
        except Exception as exc:  # noqa: BLE001 - one unreadable file must not stop the bench
            print(f"pagerouter bench: skipping {f}: cannot open: {exc}", file=sys.stderr)
            counts.append(0)
    chosen: list[list[int]] = [[] for _ in files]
    budget = max_pages if max_pages is not None else sum(counts)
    n = 1
    while budget > 0 and any(c >= n for c in counts):
        for i, c in enumerate(counts):
            if c >= n and budget > 0:
                chosen[i].append(n)
                budget -= 1
        n += 1
    return Corpus(name, [CorpusFile(f, pages) for f, pages in zip(files, chosen) if pages])
