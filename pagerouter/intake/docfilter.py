"""The document filter: whether a whole file is worth converting, judged on cheap evidence.

    decision = judge_file(data, cfg.filter, isolate=cfg.isolation.enabled)
    decision.keep, decision.reasons, decision.scores

Evidence is the text layer of the first `filter.pages` pages (plus their image and form-field
counts), read by PyMuPDF in a long-lived child process with a timeout when isolation is on, since the
filter reads untrusted bytes just as the converter does. The checks, in the spirit of olmOCR's
PDF filter but with our own lists and thresholds (config/filter.py):

  * no text layer (a scan): kept, never judged by language; OCR decides what it says
  * too little text: a text layer with almost nothing in it and no image to OCR
  * script: the dominant Unicode script (unicode_scripts.py) must be in `keep_scripts`
  * language: distinctive-stopword profiles for en/de/fr/es/it/pt/nl (Latin script only);
    a language that is not clearly one of them is kept, because that is all we can measure
  * SEO/download spam: spam keyword share, and keyword stuffing (one content word everywhere)
  * form letter / boilerplate: lines repeated across pages; blank templates (fields, ____)

A file that cannot be read is kept unjudged: its conversion reports the problem properly.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import select
import struct
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field

from ..config.filter import PROFILED_LANGUAGES, FilterConfig
from ..common.unicode_scripts import dominant_script, script_counts

# Common function words, written for this filter. A word listed for two languages (e.g. "de"
# is French, Spanish, Portuguese and Dutch) is dropped from all of them below: only words that
# point to one language count, so the scores separate even close languages. No one-letter words
# (pt "a e o", es "y"): a garbled OCR layer is full of stray letters, and a real one read as
# Portuguese at 0.165 when they counted.
_STOPWORDS_RAW = {
    "en": "the and of to is was are were that this with for from by have has had not but which "
          "they their there been would will can could should these those what when where who it its "
          "as be or an at on we our you your he she his her them than then also into about",
    "de": "der die das und ist nicht ein eine einen einem einer mit den dem des von zu sich auf "
          "für auch als wird werden wurde sind war hat haben bei nach oder aber wie noch nur durch "
          "dass wenn über unter ich wir sie es im am zum zur kann",
    "fr": "le la les et est une des du dans pour pas que qui sur par avec sont plus ce cette ces "
          "au aux il elle ils nous vous leur mais ou être avoir été fait comme tout aussi entre "
          "sans sous très où ne se sa son",
    "es": "el la los las y es una del en por con para que se no su sus al lo como más pero está "
          "son ha fue han este esta estos entre sobre también cuando muy sin hasta desde donde "
          "porque ya yo nosotros ellos",
    "it": "il lo la gli le di che è un una del della dei delle nel nella per con non sono come "
          "anche più ma questo questa quando tra dal dalla alla alle essere stato hanno ha se "
          "perché molto sia loro noi",
    "pt": "o os a as e é um uma do da dos das no na nos nas em para com não que se por mais como "
          "mas foi são ao aos pelo pela também quando muito seu sua entre depois ainda está "
          "isso eles nós você",
    "nl": "de het een en van is dat die in te op met voor niet zijn er aan ook als bij door maar "
          "om wordt worden werd naar dan nog wel uit over kan heeft hebben deze dit wat ze we "
          "hij zij geen onder",
}
_SEEN = Counter(w for words in _STOPWORDS_RAW.values() for w in set(words.split()))
STOPWORDS: dict[str, frozenset[str]] = {
    lang: frozenset(w for w in words.split() if _SEEN[w] == 1 and len(w) > 1) for lang, words in _STOPWORDS_RAW.items()
}
ALL_STOPWORDS = frozenset(w for words in _STOPWORDS_RAW.values() for w in words.split())
assert tuple(STOPWORDS) == PROFILED_LANGUAGES  # the config validates keep_languages against this list
LANGUAGE_SCRIPT = {lang: "Latin" for lang in STOPWORDS}
"""The script each profiled language is written in (all Latin so far)."""

# Words of download/SEO spam pages ("free pdf download ebook epub ..."); a real document uses a
# few of them, a spam page is made of them.
SPAM_WORDS = frozenset(
    "download downloads free pdf ebook ebooks epub mobi kindle torrent torrents crack keygen serial "
    "casino viagra cialis porn xxx bitcoin forex loan loans cheap discount click online bestseller "
    "audiobook fb2 azw djvu unlimited mp3 full version read".split()
)

_WORD = re.compile(r"[^\W\d_]+")
_BLANK = re.compile(r"_{4,}|<<[^<>\n]{1,40}>>|\{\{[^{}\n]{1,40}\}\}|\[(?:[A-Z][a-z]+ ?){1,4}\]")


@dataclass
class Evidence:
    """What the filter reads of a file: one text per page read, and counts of what else is there."""

    pages: list[str] = field(default_factory=list)
    images: int = 0
    widgets: int = 0
    page_count: int = 0


@dataclass
class FilterDecision:
    keep: bool
    reasons: list[str]
    scores: dict

    def line(self, name: str) -> str:
        return f"{name}: {'kept' if self.keep else 'skipped'}: " + "; ".join(self.reasons)


def read_evidence(data: bytes, pages: int, password: str | None = None) -> Evidence:
    """The text layers, image and widget counts of the first `pages` pages (in this process)."""
    import pymupdf

    doc = pymupdf.open(stream=data)
    try:
        if doc.needs_pass and not (password and doc.authenticate(password)):
            raise ValueError("encrypted")
        ev = Evidence(page_count=doc.page_count)
        for i in range(min(pages, doc.page_count)):
            page = doc.load_page(i)
            ev.pages.append(page.get_text("text") or "")
            ev.images += len(page.get_images(full=False))
            ev.widgets += sum(1 for _ in page.widgets())
        return ev
    finally:
        doc.close()


class _Child:
    """One long-lived `python -m pagerouter.intake.docfilter` child that reads files' text layers: a crash
    or hang in MuPDF on a hostile file costs the child (killed, started again on the next file),
    never the batch. Long-lived because a fresh interpreter + PyMuPDF import per file cost ~2 s
    each on a loaded 2-core box, against ~25 ms for the read itself. Calls are serialised."""

    RECYCLE_AFTER = 500  # files per child: bounds any slow leak in MuPDF

    def __init__(self):
        self.proc: subprocess.Popen | None = None
        self.lock = threading.Lock()
        self.served = 0

    def _start(self) -> subprocess.Popen:
        return subprocess.Popen([sys.executable, "-m", "pagerouter.intake.docfilter"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None

    def read(self, data: bytes, pages: int, timeout_s: float, password: str | None) -> dict:
        with self.lock:
            if self.proc is None or self.proc.poll() is not None or self.served >= self.RECYCLE_AFTER:
                self.stop()
                self.proc, self.served = self._start(), 0
            head = json.dumps({"pages": pages, "password": password}).encode()
            try:
                self.proc.stdin.write(struct.pack(">II", len(head), len(data)) + head + data)
                self.proc.stdin.flush()
                reply = self._recv(timeout_s)
            except Exception:
                self.stop()  # a dead, hung or confused child is replaced on the next file
                raise
            self.served += 1
            return reply

    def _recv(self, timeout_s: float) -> dict:
        fd, buf, deadline = self.proc.stdout.fileno(), b"", time.monotonic() + timeout_s
        while len(buf) < 4 or len(buf) < 4 + struct.unpack(">I", buf[:4])[0]:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise RuntimeError(f"reading the text layer took over {timeout_s:g} s")
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                raise RuntimeError(f"the text-layer reader died (exit {self.proc.wait()})")
            buf += chunk
        return json.loads(buf[4:4 + struct.unpack(">I", buf[:4])[0]])


_CHILD = _Child()
atexit.register(_CHILD.stop)


def read_evidence_isolated(data: bytes, pages: int, timeout_s: float, password: str | None = None) -> Evidence:
    """`read_evidence` in the reader child process; raises RuntimeError when it fails or times out."""
    reply = _CHILD.read(data, pages, timeout_s, password)
    if "error" in reply:
        raise RuntimeError(reply["error"])
    return Evidence(**reply["evidence"])


def language_scores(words: list[str]) -> dict[str, float]:
    """Per profiled language, the share of `words` that are its distinctive stopwords."""
    n = max(len(words), 1)
    counts = Counter(words)  # one-letter words never count (see _STOPWORDS_RAW)
    return {lang: sum(counts[w] for w in sw) / n for lang, sw in STOPWORDS.items()}


def _lines(text: str) -> list[str]:
    """Prose lines of a page, digits folded so "Account 1003" and "Account 1004" repeat. Only
    lines of 4+ words of 2+ letters count: table cells, units and page numbers repeat across the pages of any
    table-heavy paper (two real ones scored 0.64 when they counted), sentences of a letter do not."""
    out = []
    for ln in text.splitlines():
        norm = re.sub(r"\d+", "#", " ".join(ln.lower().split()))
        if sum(len(w) > 1 for w in _WORD.findall(norm)) >= 4:  # spaced-out vertical text is no prose
            out.append(norm)
    return out


def line_repeat_share(pages: list[str]) -> float:
    """Share of all text lines that also occur on another page."""
    per_page = [set(_lines(t)) for t in pages]
    on_pages = Counter(line for lines in per_page for line in lines)
    total = repeated = 0
    for t in pages:
        for line in _lines(t):
            total += 1
            repeated += on_pages[line] > 1
    return repeated / total if total else 0.0


def judge(ev: Evidence, cfg: FilterConfig) -> FilterDecision:
    """The decision on one file's evidence: every failed check adds a reason; kept only if none."""
    text = "\n".join(ev.pages)
    chars = sum(1 for ch in text if not ch.isspace())
    words = _WORD.findall(text.lower())
    scores: dict = {"pages_read": len(ev.pages), "chars": chars, "words": len(words), "images": ev.images}
    if chars <= cfg.no_text_chars:
        return FilterDecision(True, ["no text layer to judge"], scores)
    if chars < cfg.min_chars and ev.images == 0:
        return FilterDecision(False, [f"too little text: {chars} characters < min_chars {cfg.min_chars}, no images"], scores)
    if chars < cfg.min_chars:  # a few characters beside images: a scan with a stray text layer
        return FilterDecision(True, [f"no text layer to judge ({chars} characters beside {ev.images} images)"], scores)
    skip: list[str] = []

    sd = dominant_script(script_counts(text))
    scores["script"], scores["script_share"] = sd.script, round(sd.share, 3)
    if cfg.keep_scripts and sd.script and sd.script not in cfg.keep_scripts:
        skip.append(f"script {sd.script} ({sd.share:.2f} of letters) not in keep_scripts {cfg.keep_scripts}")

    lang_note = None
    if cfg.keep_languages:
        kept_scripts = {LANGUAGE_SCRIPT.get(k) for k in cfg.keep_languages}
        if sd.script and sd.script not in kept_scripts:
            skip.append(f"script {sd.script}: none of keep_languages {cfg.keep_languages} is written in it")
        elif len(words) < cfg.min_language_words:
            lang_note = f"language not judged: {len(words)} words < {cfg.min_language_words}"
        else:
            ls = language_scores(words)
            scores.update({f"lang_{k}": round(v, 3) for k, v in ls.items()})
            (best, s1), (_, s2) = sorted(ls.items(), key=lambda kv: -kv[1])[:2]
            scores["language"] = best if s1 >= cfg.min_language_share and s1 >= cfg.min_language_margin * s2 else None
            if scores["language"] is None:
                lang_note = f"language undetermined (best {best} {s1:.3f}, runner-up {s2:.3f}): kept"
            elif best not in cfg.keep_languages:
                skip.append(f"language {best} (stopword share {s1:.3f}) not in keep_languages {cfg.keep_languages}")

    spam = sum(1 for w in words if w in SPAM_WORDS) / max(len(words), 1)
    scores["spam_share"] = round(spam, 4)
    if spam >= cfg.max_spam_share:
        skip.append(f"SEO/download spam: {spam:.3f} of words are spam keywords >= {cfg.max_spam_share}")
    content = Counter(w for w in words if w not in ALL_STOPWORDS and len(w) > 2)
    if content and len(words) >= cfg.min_stuffing_words:
        top, n = content.most_common(1)[0]
        scores["top_word"], scores["top_word_share"] = top, round(n / len(words), 4)
        if n / len(words) >= cfg.max_top_word_share:
            skip.append(f"keyword stuffing: '{top}' is {n / len(words):.3f} of words >= {cfg.max_top_word_share}")

    with_text = [t for t in ev.pages if t.strip()]
    if len(with_text) >= cfg.min_repeat_pages:
        rep = line_repeat_share(with_text)
        scores["line_repeat_share"] = round(rep, 3)
        if rep >= cfg.max_line_repeat_share:
            skip.append(f"form letter/boilerplate: {rep:.2f} of lines repeat across {len(with_text)} pages "
                        f">= {cfg.max_line_repeat_share}")
    fields = ev.widgets + len(_BLANK.findall(text))
    density = 100 * fields / max(len(words), 1)
    scores["form_fields"], scores["form_density"] = fields, round(density, 2)
    if fields >= cfg.min_form_fields and density >= cfg.max_form_density:
        skip.append(f"blank form/template: {fields} fields and blanks, {density:.1f} per 100 words >= {cfg.max_form_density}")

    if skip:
        return FilterDecision(False, skip, scores)
    reasons = ["passed every check"] + ([lang_note] if lang_note else [])
    if scores.get("language"):
        reasons.append(f"language {scores['language']} ({scores['lang_' + scores['language']]:.3f})")
    return FilterDecision(True, reasons, scores)


def judge_file(data: bytes, cfg: FilterConfig, *, isolate: bool = True, password: str | None = None) -> FilterDecision:
    """Read the evidence of one file's bytes (isolated or not) and judge it."""
    try:
        if isolate:
            ev = read_evidence_isolated(data, cfg.pages, cfg.timeout_s, password)
        else:
            ev = read_evidence(data, cfg.pages, password)
    except Exception as exc:  # noqa: BLE001 - unreadable: the converter reports it, the filter does not guess
        return FilterDecision(True, [f"not judged: {str(exc).strip()[:200] or type(exc).__name__}"], {})
    return judge(ev, cfg)


def _child() -> int:
    """`python -m pagerouter.intake.docfilter`: a loop over framed requests on stdin (lengths of a JSON
    header and of the file's bytes, then both) answering framed JSON Evidence (or an error) on stdout."""
    inp, out = sys.stdin.buffer, sys.stdout.buffer
    while True:
        sizes = inp.read(8)
        if len(sizes) < 8:
            return 0  # the parent closed the pipe
        n_head, n_data = struct.unpack(">II", sizes)
        opts, data = json.loads(inp.read(n_head)), inp.read(n_data)
        try:
            reply = {"evidence": read_evidence(data, int(opts["pages"]), opts.get("password")).__dict__}
        except Exception as exc:  # noqa: BLE001 - a bad file is this file's answer, the loop goes on
            reply = {"error": f"{type(exc).__name__}: {str(exc)[:200]}"}
        body = json.dumps(reply).encode()
        out.write(struct.pack(">I", len(body)) + body)
        out.flush()


if __name__ == "__main__":
    raise SystemExit(_child())
