"""The driver's side of `pagerouter batch --ray`: pages in, documents out, nothing lost.

Rows come back from the pipeline in any order. Per document the assembler keeps its pages
until all of its selected pages are in, then writes `.md` and `.json` (exactly what `pagerouter
convert` writes, from the same `Document`), and appends the journal record (the commit point,
as for `--local`: fsynced, after the outputs are in place) with one manifest row per page.

Pages of a document still incomplete when a batch of rows has been taken in are appended to its
staging file (`pagerouter-batch.staging/` beside the journal, fsynced), so a killed run loses
only the pages in flight: a rerun's open task leaves out the staged pages of a file with the
same bytes, and the assembler reads them back. Pages a dropped block took with it (Ray Data
gave up on its task after the retries) come out `failed` with that reason when the stream ends.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

from .failures import file_error
from .fsio import Output
from .inputs import BatchItem
from .journal import Journal, Outcome, document_fields, journal_record, tmp_tag
from .ray_stages import ROLE_ORDER, DocHeader, DocResult, PagesOut, Row

STAGING = "pagerouter-batch.staging"
LOST = "its Ray task failed {n} times (a process or node lost, or an error the stage could not keep to the page)"


def staging_path(journal_dir: Path, item: BatchItem) -> Path:
    return journal_dir / STAGING / f"{hashlib.sha256(item.uri.encode()).hexdigest()[:24]}.jsonl"


def read_staged(path: Path, config_hash: str) -> tuple[str, list[dict]] | None:
    """(sha256, page lines) of a staging file written under this config; None if there is none
    usable (a torn last line, from a kill mid-write, is skipped)."""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    try:
        head = json.loads(lines[0])
    except (ValueError, IndexError):
        return None
    if head.get("config_hash") != config_hash:
        return None
    out = []
    for line in lines[1:]:
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    return head["sha256"], out


def manifest_row(path: str, page, run: str) -> dict:
    engines = list(dict.fromkeys(b.engine for b in page.blocks if b.engine))
    return {"path": path, "page": page.number, "route": page.route or "", "status": page.status,
            "flags": list(page.flags), "engine": "+".join(engines), "seconds": round(sum(page.timings.values()), 4),
            "run": run}


@dataclass
class _Doc:
    item: BatchItem
    header: DocHeader
    t0: float
    pages: dict = field(default_factory=dict)  # number -> Page
    labels: set = field(default_factory=set)  # (role, engine, version) that ran for its pages
    runs: dict = field(default_factory=dict)  # number -> run id that converted it
    fresh: list = field(default_factory=list)  # staging lines not yet written
    cpu_s: float = 0.0
    gpu_s: float = 0.0


class Assembler:
    def __init__(self, items: list[BatchItem], output: Output, journal: Journal, journal_dir: Path, render,
                 config_hash: str, pages_opt: str | None, previous: dict, run_id: str, shard: tuple[int, int],
                 max_retries: int, on_done=None):
        self.items, self.output, self.journal, self.journal_dir = items, output, journal, journal_dir
        self.render, self.config_hash, self.pages_opt, self.previous = render, config_hash, pages_opt, previous
        self.run_id, self.tag, self.max_retries, self.on_done = run_id, tmp_tag(shard), max_retries, on_done
        self.docs: dict[int, _Doc] = {}
        self.outcomes: dict[int, Outcome] = {}
        self.cpu_s = self.gpu_s = 0.0
        self.pages_in = 0  # pages converted by this run's pipeline
        self.first_output_s: float | None = None
        self.t0 = time.perf_counter()

    # ------------------------------------------------------------------ rows in
    def take(self, rows: list[Row]) -> None:
        """Take in one batch of rows from the pipeline, then stage what is still incomplete."""
        touched: set[int] = set()
        for row in rows:
            if row.kind == "docs":
                for res in row.obj:
                    self._result(res)
            elif row.kind == "pages":
                # A page comes twice when its stage posted it early (early_pages.py) and the dataset
                # brings it too, or a retried task posted it again: the first copy counts, once.
                if row.doc in self.outcomes:
                    continue
                out: PagesOut = row.obj
                doc = self._doc(row.doc, out.header)
                new = [(page, labels) for page, labels in out.pages if page.number not in doc.pages]
                share = len(new) / max(1, len(out.pages))
                doc.cpu_s, doc.gpu_s = doc.cpu_s + out.cpu_s * share, doc.gpu_s + out.gpu_s * share
                for page, labels in new:
                    self._add(doc, page, labels, self.run_id, out.cpu_s / max(1, len(out.pages)), out.gpu_s / max(1, len(out.pages)))
                    self.pages_in += 1
                touched.add(row.doc)
            else:  # a row no stage took (a stage left out of the pipeline): its page must not vanish
                self._stray(row)
                touched.add(row.doc)
        for i in touched:
            doc = self.docs.get(i)
            if doc is not None and len(doc.pages) >= doc.header.total:
                self._finish(i)
            elif doc is not None:
                self._stage(doc)

    def _doc(self, i: int, header: DocHeader) -> _Doc:
        doc = self.docs.get(i)
        if doc is None:
            doc = self.docs[i] = _Doc(self.items[i], header, time.perf_counter(), cpu_s=header.open_cpu_s)
            self.cpu_s += header.open_cpu_s
            if header.staged:
                self._restore(doc)
        return doc

    def _add(self, doc: _Doc, page, labels, run: str, cpu: float = 0.0, gpu: float = 0.0, fresh: bool = True) -> None:
        doc.pages[page.number] = page
        doc.runs[page.number] = run
        doc.labels.update(tuple(x) for x in labels)
        if fresh:
            doc.fresh.append({"page": page.model_dump(mode="json"), "engines": [list(x) for x in labels], "run": run})
            self.cpu_s, self.gpu_s = self.cpu_s + cpu, self.gpu_s + gpu

    def _restore(self, doc: _Doc) -> None:
        from pagerouter.model import Page

        got = read_staged(staging_path(self.journal_dir, doc.item), self.config_hash)
        if got is None or got[0] != doc.header.sha:
            return
        for line in got[1]:
            self._add(doc, Page.model_validate(line["page"]), line["engines"], line.get("run", ""), fresh=False)

    def _stage(self, doc: _Doc) -> None:
        if not doc.fresh:
            return
        path = staging_path(self.journal_dir, doc.item)
        path.parent.mkdir(parents=True, exist_ok=True)
        head = "" if path.exists() and os.path.getsize(path) else json.dumps(
            {"input": doc.item.uri, "sha256": doc.header.sha, "config_hash": self.config_hash}) + "\n"
        text = head + "".join(json.dumps(x) + "\n" for x in doc.fresh)  # ASCII: a lone surrogate in a page's text stays storable
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            if head == "" and os.path.getsize(path):  # end a line torn by a kill
                with open(path, "rb") as f:
                    f.seek(-1, os.SEEK_END)
                    if f.read(1) != b"\n":
                        os.write(fd, b"\n")
            os.write(fd, text.encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)
        doc.fresh.clear()

    def _stray(self, row: Row) -> None:
        from pagerouter.flow.page_status import failed_page

        work = row.obj
        doc = self._doc(row.doc, work.header)
        page = failed_page(work.name, work.outcome.page.number, "OCR", RuntimeError(f"no stage took the {row.kind} row"))
        self._add(doc, page, work.engines, self.run_id)

    # ------------------------------------------------------------------ documents out
    def _result(self, res: DocResult) -> None:
        item = self.items[res.doc]
        self.cpu_s += res.cpu_s
        if res.status == "skip":
            prev = self.previous.get((item.uri, res.sha, self.config_hash))
            if prev is not None:
                self._outcome(res.doc, prev, converted=False)
                return
            res.status, res.error = "failed", f"{item.shown}: the journal record it was skipped for is gone"
        if res.status == "staged":
            self._doc(res.doc, res.header)
            self._finish(res.doc)
            return
        extra = {"reasons": res.reasons, "scores": res.scores} if res.status == "filtered" else {}
        rec = journal_record(item, res.sha, self.config_hash, "ray", 0.0,
                             status="skipped" if res.status == "filtered" else "failed", error=res.error, **extra)
        self.journal.append(rec)
        self._outcome(res.doc, rec, converted=True)

    def _finish(self, i: int) -> None:
        from pagerouter.intake.inputs import parse_pages
        from pagerouter.flow.pipeline import new_document

        doc = self.docs.pop(i)
        item, h = doc.item, doc.header
        out = new_document(SimpleNamespace(name=item.shown, page_count=h.page_count))
        out.pages = [doc.pages[n] for n in parse_pages(self.pages_opt, h.page_count, item.shown)]
        # {engine: version} in the order a Converter first calls them: pymupdf, layout, reader, escalation
        out.engines = {"pymupdf": h.pymupdf, **{name: ver for role in ROLE_ORDER
                                                 for (r, name, ver) in sorted(doc.labels) if r == role}}
        try:
            md, js = self.render(out)
            outs = self.output.write_document(item, md, js, self.tag)
        except Exception as exc:  # noqa: BLE001 - as in --local: one file's problem is its failed record, the run goes on
            rec = journal_record(item, h.sha, self.config_hash, "ray", 0.0, status="failed",
                                 error=file_error(item.shown, exc, "cannot write its outputs"))
            self.journal.append(rec)
            staging_path(self.journal_dir, item).unlink(missing_ok=True)
            self._outcome(i, rec, converted=True)
            return
        if self.first_output_s is None:
            self.first_output_s = time.perf_counter() - self.t0
        rows = [manifest_row(item.uri, p, doc.runs.get(p.number, "")) for p in out.pages]
        rec = journal_record(item, h.sha, self.config_hash, "ray", sum(r["seconds"] for r in rows),
                             status="done", error=None, outputs=outs, **document_fields(out),
                             cpu_s=round(doc.cpu_s, 4), gpu_s=round(doc.gpu_s, 4), page_rows=rows)
        self.journal.append(rec)  # the commit point: after the outputs are in place
        staging_path(self.journal_dir, item).unlink(missing_ok=True)
        self._outcome(i, rec, converted=True)

    def _outcome(self, i: int, rec: dict, converted: bool) -> None:
        out = self.outcomes[i] = Outcome(self.items[i], rec, converted)
        if self.on_done is not None:
            self.on_done(out)

    def close(self, complete: bool) -> None:
        """End of the stream. `complete`: the pipeline ran to its end, so whatever has not come
        back was dropped after its retries: missing pages become failed pages and files never
        heard of failed records. Otherwise (the run was cut short) they are left for a rerun."""
        from pagerouter.intake.inputs import parse_pages
        from pagerouter.flow.page_status import failed_page

        for doc in self.docs.values():
            self._stage(doc)
        if not complete:
            return
        why = RuntimeError("lost: " + LOST.format(n=self.max_retries + 1))
        for i in list(self.docs):
            doc = self.docs[i]
            for n in parse_pages(self.pages_opt, doc.header.page_count, doc.item.shown):
                if n not in doc.pages:
                    self._add(doc, failed_page(doc.item.shown, n, "Ray Data", why), [], self.run_id)
            self._finish(i)
        for i, item in enumerate(self.items):
            if i not in self.outcomes:
                rec = journal_record(item, None, self.config_hash, "ray", 0.0, status="failed",
                                     error=f"{item.shown}: lost before it was opened: " + LOST.format(n=self.max_retries + 1))
                self.journal.append(rec)
                self._outcome(i, rec, converted=True)
