"""The `--ray` pipeline's stages without Ray: the UDFs Ray Data calls (pagerouter/batch/ray_stages.py),
chained here by hand on pyarrow tables, then the driver's assembler, against the `Converter`;
plus the pieces around them (page ranges, URI planning). The cluster runs are in test_batch_ray.py."""

from __future__ import annotations

import json
from pathlib import Path

import pymupdf
import pytest

from pagerouter.cli.batch import config_hash
from pagerouter.batch.fsio import Output, plan_items
from pagerouter.batch.journal import Journal, read_records
from pagerouter.batch.ray_assembly import Assembler
from pagerouter.batch.ray_stages import (
    EscalationStage, FileJob, LayoutStage, RangeJob, ReaderStage, Row, RunSpec, dump, open_files, packed, ranges, rows_of,
    table_of, triage_ranges,
)
from pagerouter.config import PagerouterConfig
from pagerouter.convert.converter import Converter
from pagerouter.render.output import to_json, to_markdown
from pagerouter.bench.synth import LOREM, add_text_page

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "samples" / "mixed-sample.pdf"


def assemble(tmp_path: Path, items, cfg: PagerouterConfig, rows: list[Row], out: Path) -> None:
    """The driver's assembler over `rows`, journal in tmp_path, then the end of a complete stream."""
    journal = Journal(tmp_path, (0, 1))
    asm = Assembler(items, Output(str(out)), journal, tmp_path, lambda doc: (to_markdown(doc, cfg.output), to_json(doc)),
                    config_hash(cfg, {}), None, {}, "r1", (0, 1), 3)
    asm.take(rows)
    asm.close(complete=True)
    journal.close()



def _bulk_run(cfg: PagerouterConfig) -> RunSpec:
    """The run every stage test converts under: `cfg`, bulk wait, two ranges per file."""
    return RunSpec(cfg.model_dump_json(), None, None, "auto", (), False, 900.0, "bulk wait", False, 2)


def _doubted_scan(tmp_path: Path) -> Path:
    """tmp_path/scan.pdf: one scanned page (the fake reader doubts its reading)."""
    from pagerouter.bench.synth import add_scanned_page

    d = pymupdf.open()
    add_scanned_page(d, ["A scanned page the fake reader doubts."])
    d.save(tmp_path / "scan.pdf")
    d.close()
    return tmp_path / "scan.pdf"


def _triaged(path: Path, run: RunSpec) -> list[Row]:
    """The rows triage sends on for one file, opened and triaged as the pipeline does."""
    return rows_of(triage_ranges(table_of(rows_of(open_files(
        table_of([Row(0, "file", dump(FileJob("", str(path), path.name, {})))]), run))), run))

def test_ranges_cut_runs_of_indices_and_short_files_share_a_unit():
    assert ranges(list(range(7)), 3) == [(0, 3), (3, 6), (6, 7)]
    assert ranges([0, 1, 4, 5, 6, 9], 2) == [(0, 2), (4, 6), (6, 7), (9, 10)]  # staged pages left out
    assert ranges([], 5) == []
    jobs = [RangeJob(d, None, "", "", "", a, b) for d, (a, b) in [(0, (0, 3)), (0, (3, 6)), (1, (0, 1)), (2, (0, 2)), (3, (0, 3))]]
    assert [[(j.doc, j.start) for j in unit] for unit in packed(jobs, 3)] == [[(0, 0)], [(0, 3)], [(1, 0), (2, 0)], [(3, 0)]]


def test_uri_inputs_plan_like_paths(tmp_path):
    for rel in ("a/x.pdf", "b/x.pdf", "b/c/y.png", "b/notes.txt"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(b"%PDF")
    items = plan_items([f"file://{tmp_path}"])
    assert [str(i.rel) for i in items] == ["a/x", "b/c/y", "b/x"]
    assert items[0].scheme == "file" and items[0].path == str(tmp_path / "a" / "x.pdf")
    assert [str(i.rel) for i in plan_items([f"file://{tmp_path}/b/*.pdf"])] == ["x"]
    assert [i.shown for i in plan_items([f"file://{tmp_path}/gone.pdf"])] == [f"file://{tmp_path}/gone.pdf"]
    local = plan_items([str(tmp_path / "a")])
    assert local[0].uri == str(tmp_path / "a" / "x.pdf") and local[0].scheme == ""  # a --local journal's key


def _run_stages(run: RunSpec, jobs: list[FileJob]) -> list[Row]:
    """The dataset of ray_driver.build_dataset, stage by stage, one block per range as there."""
    files = table_of([Row(i, "file", dump(j)) for i, j in enumerate(jobs)])
    opened = rows_of(open_files(files, run))
    triaged = [r for row in opened for r in rows_of(triage_ranges(table_of([row]), run))]
    rows = triaged
    for stage in (LayoutStage(run), ReaderStage(run), EscalationStage(run)):
        rows = rows_of(stage(table_of(rows)))
    return rows


@pytest.mark.slow
def test_stages_chained_by_hand_give_the_converters_document(tmp_path):
    """The mixed sample (text layer, scans, a lying hidden layer, blank) cut into ranges of two
    pages, plus a five-page born-digital file: the same Markdown and JSON (but for timings and
    OCR confidences, see test_batch_ray.same_json) as `Converter.convert`."""
    from .test_batch_ray import same_json

    d = pymupdf.open()
    for i in range(5):
        add_text_page(d, [LOREM], title=f"Part {i + 1}", header="Running head", footer=str(i + 1))
    d.save(tmp_path / "five.pdf")
    cfg = PagerouterConfig.model_validate({"batch": {"pages_per_range": 2}})
    run = _bulk_run(cfg)
    (tmp_path / SAMPLE.name).write_bytes(SAMPLE.read_bytes())
    srcs = [tmp_path / SAMPLE.name, tmp_path / "five.pdf"]
    rows = _run_stages(run, [FileJob("", str(p), p.name, {}) for p in srcs])
    assert {r.kind for r in rows} == {"pages"}

    out = tmp_path / "out"
    items = plan_items([str(p) for p in srcs])
    items = sorted(items, key=lambda i: srcs.index(Path(i.path)))
    assemble(tmp_path, items, cfg, rows, out)
    with Converter(cfg) as conv:
        for p in srcs:
            want = conv.convert(str(p), name=p.name, wait="bulk")
            assert (out / f"{p.stem}.md").read_text() == to_markdown(want, cfg.output), p.name
            assert same_json(json.loads((out / f"{p.stem}.json").read_text()), json.loads(to_json(want))), p.name
    recs = {Path(r["input"]).name: r for r in read_records(tmp_path)}
    assert recs["mixed-sample.pdf"]["pages"] == 5 and len(recs["mixed-sample.pdf"]["page_rows"]) == 5
    assert {r["route"] for r in recs["mixed-sample.pdf"]["page_rows"]} >= {"text_layer", "ocr", "blank"}


def test_a_block_lost_after_its_retries_fails_its_pages_by_name(tmp_path):
    """The stream ended (Ray Data dropped a block after its retries): the pages that never came
    back are `failed` with that reason, the file still gets its outputs and a done record, and a
    file never heard of gets a failed record."""
    d = pymupdf.open()
    for i in range(3):
        add_text_page(d, [LOREM], title=f"Part {i + 1}")
    d.save(tmp_path / "three.pdf")
    (tmp_path / "other.pdf").write_bytes((tmp_path / "three.pdf").read_bytes())
    cfg = PagerouterConfig.model_validate({"ocr": {"enabled": False}, "isolation": {"enabled": False}})
    run = RunSpec(cfg.model_dump_json(), None, None, "auto", (), False, 900.0, "bulk wait", False, 1)
    items = plan_items([str(tmp_path / "three.pdf"), str(tmp_path / "other.pdf")])
    items = sorted(items, key=lambda i: i.path.endswith("other.pdf"))
    opened = rows_of(open_files(table_of([Row(0, "file", dump(FileJob("", items[0].path, items[0].shown, {})))]), run))
    triaged = [r for row in opened[:2] for r in rows_of(triage_ranges(table_of([row]), run))]  # range 3 lost
    assemble(tmp_path, items, cfg, triaged, tmp_path / "out")
    recs = {Path(r["input"]).name: r for r in read_records(tmp_path)}
    assert recs["three.pdf"]["status"] == "done" and recs["three.pdf"]["page_status"] == {"ok": 2, "flagged": 0, "failed": 1}
    doc = json.loads((tmp_path / "out" / "three.json").read_text())
    assert "three.pdf: page 3: Ray Data failed: lost: its Ray task failed 4 times" in doc["pages"][2]["error"]
    assert recs["other.pdf"]["status"] == "failed" and "lost before it was opened" in recs["other.pdf"]["error"]


@pytest.mark.parametrize("isolated", [True, False], ids=["isolated", "in-process"])
def test_a_walk_of_page_ranges_reads_as_one_walk_of_all(tmp_path, isolated):
    """`PageWork.outcomes(..., span=)` (the seam the triage tasks use): ranges of 3 pages of a
    7-page file with running heads and footers read exactly as one walk over all 7 (the
    header/footer pre-scan samples the whole selection either way)."""
    import asyncio

    from pagerouter.isolation import page_work

    d = pymupdf.open()
    for i in range(7):
        add_text_page(d, [LOREM], title=f"Part {i + 1}", header="Running head", footer=f"Page {i + 1}")
    data = d.tobytes()
    cfg = PagerouterConfig.model_validate({"ocr": {"enabled": False}, "isolation": {"enabled": isolated}})
    work = page_work(cfg)

    async def walk(span=None):
        src = work.open(data, "seven.pdf")
        try:
            return [o.page.model_dump_json(exclude={"timings"}) async for o in work.outcomes(src, list(range(1, 8)), "auto", span)]
        finally:
            src.close()

    try:
        whole = asyncio.run(walk())
        parts = [p for span in ranges(list(range(7)), 3) for p in asyncio.run(walk(span))]
    finally:
        work.close()
    assert len(whole) == 7 and parts == whole
    assert '"role":"header"' in whole[3].replace(" ", "") or '"role": "header"' in whole[3]


def test_a_file_whose_outputs_cannot_be_written_fails_alone(tmp_path):
    """Found by the fuzz run: a damaged font gave a page text with a lone surrogate, the JSON
    of its document could not be encoded, and the driver's exception ended the whole run. Now
    that file gets a failed record naming it (as `--local` does) and the next file is written."""
    from pagerouter.batch.ray_stages import DocHeader, PagesOut
    from pagerouter.model import Block, Page

    for name in ("bad.pdf", "good.pdf"):
        (tmp_path / name).write_bytes(b"%PDF")
    items = sorted(plan_items([str(tmp_path / "bad.pdf"), str(tmp_path / "good.pdf")]), key=lambda i: i.path)
    cfg = PagerouterConfig()

    def page(text: str) -> Page:
        return Page(number=1, status="ok", route="text_layer",
                    blocks=[Block(role="paragraph", text=text, bbox=(0, 0, 10, 10), page=1, engine="pymupdf",
                                  route="text_layer", confidence=1.0)])

    rows = [Row(i, "pages", dump(PagesOut(DocHeader(f"sha{i}", 1, 1, "1.0", False), [(page(t), [])])))
            for i, t in enumerate(["broken \udc86 text", "fine text"])]
    assemble(tmp_path, items, cfg, rows, tmp_path / "out")
    recs = {Path(r["input"]).name: r for r in read_records(tmp_path)}
    assert recs["bad.pdf"]["status"] == "failed" and "bad.pdf: cannot write its outputs" in recs["bad.pdf"]["error"]
    assert recs["good.pdf"]["status"] == "done" and "fine text" in (tmp_path / "out" / "good.md").read_text()


def test_an_error_in_one_file_of_a_shared_triage_unit_fails_only_its_pages(tmp_path, monkeypatch):
    """Ranges of files share a triage task; an exception that escapes one file's walk fails that
    file's pages with the reason, and the other files of the unit are read."""
    import hashlib

    from pagerouter.batch import ray_stages
    from pagerouter.batch.ray_stages import DocHeader

    monkeypatch.setattr(ray_stages, "_copies_dir", lambda: tmp_path / "copies")
    jobs = []
    for i, name in enumerate(("a.pdf", "b.pdf")):
        d = pymupdf.open()
        add_text_page(d, [LOREM], title=f"File {name}")
        d.save(tmp_path / name)
        sha = hashlib.sha256((tmp_path / name).read_bytes()).hexdigest()
        jobs.append(RangeJob(i, DocHeader(sha, 1, 1, pymupdf.VersionBind, False), "", str(tmp_path / name), name, 0, 1))
    cfg = PagerouterConfig.model_validate({"ocr": {"enabled": False}, "isolation": {"enabled": False}})
    run = RunSpec(cfg.model_dump_json(), None, None, "auto", (), False, 900.0, "bulk wait", False, 8)
    units = [Row(0, "range", dump(unit)) for unit in packed(jobs, 8)]
    assert len(units) == 1  # one unit for both files
    real = ray_stages._triage_range

    async def broken_for_a(job, run):
        if job.name == "a.pdf":
            raise RuntimeError("a bug in the walk")
        return await real(job, run)

    monkeypatch.setattr(ray_stages, "_triage_range", broken_for_a)
    out = {r.doc: r.obj for r in rows_of(triage_ranges(table_of(units), run))}
    (a_page, _), = out[0].pages
    (b_page, _), = out[1].pages
    assert a_page.status == "failed" and a_page.error == "a.pdf: page 1: triage failed: a bug in the walk"
    assert b_page.status == "ok" and "File b.pdf" in b_page.blocks[0].text


def test_an_error_in_one_file_of_an_open_task_fails_only_its_pages(tmp_path, monkeypatch):
    """Short files are triaged in their open task; an exception that escapes one file's page
    walk there fails that file's pages with the reason, as a triage task's would, and the other
    files of the task are read."""
    from pagerouter.batch import ray_stages

    for name in ("a.pdf", "b.pdf"):
        d = pymupdf.open()
        add_text_page(d, [LOREM], title=f"File {name}")
        d.save(tmp_path / name)
    cfg = PagerouterConfig.model_validate({"ocr": {"enabled": False}, "isolation": {"enabled": False}})
    run = RunSpec(cfg.model_dump_json(), None, None, "auto", (), False, 900.0, "bulk wait", False, 8)
    real = ray_stages._pages_of

    async def broken_for_a(walk, header, name, run):
        if name == "a.pdf":
            raise RuntimeError("a bug in the walk")
        return await real(walk, header, name, run)

    monkeypatch.setattr(ray_stages, "_pages_of", broken_for_a)
    jobs = [FileJob("", str(tmp_path / n), n, {}) for n in ("a.pdf", "b.pdf")]
    opened = open_files(table_of([Row(i, "file", dump(j)) for i, j in enumerate(jobs)]), run)
    out = {r.doc: r.obj for r in rows_of(triage_ranges(opened, run))}
    (a_page, _), = out[0].pages
    (b_page, _), = out[1].pages
    assert a_page.status == "failed" and a_page.error == "a.pdf: page 1: triage failed: a bug in the walk"
    assert b_page.status == "ok" and "File b.pdf" in b_page.blocks[0].text


def _counting(monkeypatch) -> dict:
    """Counts fetches of an input (`fsio.read_input`, `fsio.read_bytes`) and opens of a document."""
    from pagerouter.batch import fsio
    from pagerouter.isolation import InProcessPages

    counts = {"fetch": 0, "open": 0}
    for mod, name, key in ((fsio, "read_input", "fetch"), (fsio, "read_bytes", "fetch"), (InProcessPages, "open", "open")):
        real = getattr(mod, name)

        def counted(*a, _real=real, _key=key, **k):
            counts[_key] += 1
            return _real(*a, **k)
        monkeypatch.setattr(mod, name, counted)
    return counts


def test_a_file_that_fits_one_range_is_fetched_and_opened_once_and_sends_no_range(tmp_path, monkeypatch):
    """A born-digital file of fewer pages than a range is triaged in its open task, on the walk
    that opened it: the open task's files leave as one `bundle` row (no `range` row: one triage
    task for all of them, which walks nothing and unpacks one `pages` row per file), each file
    fetched once and opened once (it was fetched and opened twice: open task, then triage task),
    and the pages read as `convert` reads them."""
    from pagerouter.batch import ray_stages

    counts = _counting(monkeypatch)
    walked = []
    real = ray_stages._triage_range

    async def counted(job, run):
        walked.append(job)
        return await real(job, run)
    monkeypatch.setattr(ray_stages, "_triage_range", counted)
    names = []
    for i in range(3):
        d = pymupdf.open()
        for j in range(4):
            add_text_page(d, [LOREM], title=f"File {i} part {j}", header="Running head", footer=f"Page {j + 1}")
        d.save(tmp_path / f"f{i}.pdf")
        names.append(f"f{i}.pdf")
    cfg = PagerouterConfig.model_validate({"ocr": {"enabled": False}, "isolation": {"enabled": False}})
    run = RunSpec(cfg.model_dump_json(), None, None, "auto", (), False, 900.0, "bulk wait", False, 128)
    jobs = [FileJob("", str(tmp_path / n), n, {}) for n in names]
    opened = rows_of(open_files(table_of([Row(i, "file", dump(j)) for i, j in enumerate(jobs)]), run))
    assert [r.kind for r in opened] == ["bundle"]
    rows = rows_of(triage_ranges(table_of(opened), run))
    assert [(r.doc, r.kind) for r in rows] == [(0, "pages"), (1, "pages"), (2, "pages")] and walked == []
    assert counts == {"fetch": 3, "open": 3}
    conv = Converter(cfg)
    try:
        for row, name in zip(rows, names):
            want = conv.convert(str(tmp_path / name))
            got = [p.model_dump(exclude={"timings"}) for p, _ in row.obj.pages]
            assert got == [p.model_dump(exclude={"timings"}) for p in want.pages], name
    finally:
        conv.close()


@pytest.mark.slow
def test_a_2000_page_file_is_fetched_once_per_node(tmp_path, monkeypatch):
    """A 2,000-page file is 16 range tasks (128 pages each). On the node of its open task they
    read the copy the open task kept: one fetch in all, not 17; on another node (no copy yet),
    the first range task fetches it and the others read its copy: one more fetch, not 16, also
    when they start at once. Every page comes back, once."""
    from concurrent.futures import ThreadPoolExecutor

    from pagerouter.batch import ray_stages

    monkeypatch.setattr(ray_stages, "_copies_dir", lambda: tmp_path / "node-copies")
    d = pymupdf.open()
    for i in range(2000):
        d.new_page().insert_text((72, 72), f"Page {i + 1} of the long file")
    d.save(tmp_path / "long.pdf")
    counts = _counting(monkeypatch)
    cfg = PagerouterConfig.model_validate({"ocr": {"enabled": False}, "isolation": {"enabled": False}})
    run = RunSpec(cfg.model_dump_json(), None, None, "auto", (), False, 900.0, "bulk wait", False, 128)
    opened = rows_of(open_files(table_of([Row(0, "file", dump(FileJob("", str(tmp_path / "long.pdf"), "long.pdf", {})))]), run))
    assert [r.kind for r in opened] == ["range"] * 16
    triaged = [r for row in opened for r in rows_of(triage_ranges(table_of([row]), run))]
    assert counts["fetch"] == 1
    numbers = [p.number for r in triaged for p, _ in r.obj.pages]
    assert numbers == list(range(1, 2001))

    ray_stages.drop_local_copies()  # another node: no copy there
    jobs = [job for row in opened for job in row.obj]
    with ThreadPoolExecutor(8) as pool:
        datas = list(pool.map(ray_stages.local_copy, jobs))
    assert counts["fetch"] == 2
    assert all(x == (tmp_path / "long.pdf").read_bytes() for x in datas)


# -- the OCR pools with fake engines --------------------------------------------------------------
class FakeLayoutEngine:
    """FAKE layout engine: no regions, no turn; counts its closes."""

    name, version = "fake-layout", "0"

    def __init__(self):
        self.closed = 0

    def detect_batch(self, tasks):
        from pagerouter.common.stages import LayoutResult

        return [LayoutResult(rotation=0, regions=[], engine=self.name) for _ in tasks]

    def close(self):
        self.closed += 1


class FakeDoubtingReader(FakeLayoutEngine):
    """FAKE small reader: one line per page, with a failed check of its own, so every page is flagged."""

    name = "fake-reader"

    def read_batch(self, tasks, layouts):
        from pagerouter.common.stages import Reading
        from pagerouter.model import Block, CheckResult

        return [Reading(blocks=[Block(text="first reading", role="paragraph", bbox=(72, 72, 300, 90), page=t.number,
                                      engine=self.name, route="ocr", confidence=0.4)],
                        checks=[CheckResult(name="fake_doubt", passed=False, reason="the fake reader doubts itself")],
                        engine=self.name) for t in tasks]


class FakeEscalator(FakeLayoutEngine):
    """FAKE escalation tier: a fixed reading; counts its calls."""

    name = "fake-escalator"

    def __init__(self):
        super().__init__()
        self.calls = 0

    def escalate(self, task, first):
        from pagerouter.common.stages import Reading
        from pagerouter.model import Block

        self.calls += 1
        return Reading(blocks=[Block(text="escalated reading", role="paragraph", bbox=(72, 72, 300, 90),
                                     page=task.number, engine=self.name, route="ocr", confidence=0.9)],
                       engine=self.name)


def _fake_engines(monkeypatch) -> dict:
    from pagerouter.flow import engines

    fakes = {"layout": FakeLayoutEngine(), "small_reader": FakeDoubtingReader(), "escalation": FakeEscalator()}
    monkeypatch.setattr(engines, "build_engine", lambda role, cfg: fakes[role])
    return fakes


def test_an_escalated_page_is_converted_once_in_the_pools(tmp_path, monkeypatch):
    """The reader pool asks the pipeline's escalation rule and sends the flagged scan on without
    converting it; the escalation pool converts it, once (one `convert_pages` call and one check
    of the first reading for the page, where there were two of each), into the Converter's page."""
    from pagerouter.flow import pipeline
    from pagerouter.flow.engines import EngineSet
    from pagerouter.ocr import checks

    _doubted_scan(tmp_path)
    cfg = PagerouterConfig.model_validate({"isolation": {"enabled": False}})
    run = _bulk_run(cfg)
    fakes = _fake_engines(monkeypatch)
    counts = {"convert_pages": 0, "check_reading": 0}

    def counted(module, name):
        real = getattr(module, name)

        def call(*args, **kwargs):
            counts[name] += 1
            return real(*args, **kwargs)
        monkeypatch.setattr(module, name, call)

    counted(pipeline, "convert_pages")
    counted(checks, "check_reading")
    triaged = _triaged(tmp_path / "scan.pdf", run)
    ocr_rows = [r for r in triaged if r.kind == "ocr"]
    assert len(ocr_rows) == 1
    # the triage task's own convert_pages (its text-layer pages' way out) never sees an OCR page
    assert counts == {"convert_pages": 1, "check_reading": 0}
    counts["convert_pages"] = 0
    rows = rows_of(ReaderStage(run)(LayoutStage(run)(table_of(ocr_rows))))
    assert [r.kind for r in rows] == ["escalate"] and counts == {"convert_pages": 0, "check_reading": 1}
    rows = rows_of(EscalationStage(run)(table_of(rows)))
    assert [r.kind for r in rows] == ["pages"] and fakes["escalation"].calls == 1
    assert counts["convert_pages"] == 1 and counts["check_reading"] == 2  # the first reading's, the escalated one's
    (page, engines_ran), = rows[0].obj.pages

    with Converter(cfg) as conv:
        conv.engines = EngineSet(cfg.ocr, prebuilt=fakes)
        want = conv.convert(str(tmp_path / "scan.pdf"), name="scan.pdf", wait="bulk").pages[0]
    assert page.blocks[0].text == "escalated reading" and page.status == want.status
    assert page.model_dump(exclude={"timings"}) == want.model_dump(exclude={"timings"})
    assert [role for role, _, _ in engines_ran] == ["layout", "small_reader", "escalation"]


def test_one_cpu_pool_actor_runs_the_three_stages_on_one_load_of_each_model(tmp_path, monkeypatch):
    """`batch.cpu_pool`: one actor runs layout, small reader and escalation in turn over one
    EngineSet: a born-digital row passes without a model load, the escalated scan comes out as the
    Converter's page, each model is built once (three pools built one each in three processes),
    and the actor's close closes them."""
    from pagerouter.batch.ray_stages import CpuPool
    from pagerouter.flow import engines
    from pagerouter.flow.engines import EngineSet

    _doubted_scan(tmp_path)
    cfg = PagerouterConfig.model_validate({"isolation": {"enabled": False}})
    run = _bulk_run(cfg)
    fakes = _fake_engines(monkeypatch)
    built = []
    monkeypatch.setattr(engines, "build_engine", lambda role, cfg: built.append(role) or fakes[role])
    pool = CpuPool(run, (LayoutStage, ReaderStage, EscalationStage))
    passing = [Row(3, "pages", dump("a finished range"))]
    assert [(r.doc, r.kind, r.obj) for r in rows_of(pool(table_of(passing)))] == [(3, "pages", "a finished range")]
    assert built == []
    triaged = _triaged(tmp_path / "scan.pdf", run)
    rows = rows_of(pool(table_of([r for r in triaged if r.kind == "ocr"] + passing)))
    assert sorted((r.doc, r.kind) for r in rows) == [(0, "pages"), (3, "pages")]
    (page, engines_ran), = next(r for r in rows if r.doc == 0).obj.pages
    with Converter(cfg) as conv:
        conv.engines = EngineSet(cfg.ocr, prebuilt=fakes)
        want = conv.convert(str(tmp_path / "scan.pdf"), name="scan.pdf", wait="bulk").pages[0]
    assert page.blocks[0].text == "escalated reading"
    assert page.model_dump(exclude={"timings"}) == want.model_dump(exclude={"timings"})
    assert [role for role, _, _ in engines_ran] == ["layout", "small_reader", "escalation"]
    assert sorted(built) == ["escalation", "layout", "small_reader"]  # one load each, in one actor
    pool.close()
    assert [fakes[r].closed for r in ("layout", "small_reader", "escalation")] == [1, 1, 1]


def test_a_page_the_rule_keeps_is_finished_by_the_reader_pool(tmp_path, monkeypatch):
    """Escalation off: the same flagged page is finished in the reader pool, flagged, with the
    first reading (the pipeline's rule, not a copy of it in the pool)."""
    _doubted_scan(tmp_path)
    cfg = PagerouterConfig.model_validate({"isolation": {"enabled": False}, "ocr": {"escalation": {"enabled": False}}})
    run = _bulk_run(cfg)
    fakes = _fake_engines(monkeypatch)
    triaged = _triaged(tmp_path / "scan.pdf", run)
    rows = rows_of(ReaderStage(run)(LayoutStage(run)(table_of([r for r in triaged if r.kind == "ocr"]))))
    assert [r.kind for r in rows] == ["pages"] and fakes["escalation"].calls == 0
    (page, _), = rows[0].obj.pages
    assert page.status == "flagged" and "fake_doubt" in page.flags and page.blocks[0].text == "first reading"


def test_a_pool_stage_closes_its_engines(monkeypatch):
    """An actor's EngineSet has an owner: the stage's close(), which Ray Data reaches through
    `__del__` when it shuts the actor pool down."""
    import gc

    cfg = PagerouterConfig()
    run = _bulk_run(cfg)
    fakes = _fake_engines(monkeypatch)
    stage = ReaderStage(run)
    assert stage.engine is fakes["small_reader"]  # loaded by its first page, not by the actor's start
    stage.close()
    assert fakes["small_reader"].closed == 1
    stage = EscalationStage(run)
    assert stage.engine is fakes["escalation"]
    del stage
    gc.collect()
    assert fakes["escalation"].closed == 1


def test_a_pool_actor_passes_born_digital_rows_without_loading_its_engine(monkeypatch):
    """Every row passes every pool: rows of finished pages go through an actor that has not
    loaded its model (the first output of a born-digital file no longer waits for the models)."""
    from pagerouter.flow import engines

    cfg = PagerouterConfig()
    run = _bulk_run(cfg)
    built = []
    monkeypatch.setattr(engines, "build_engine", lambda role, cfg: built.append(role))
    rows = [Row(0, "pages", dump("a finished range")), Row(1, "docs", dump(["a skipped file"]))]
    for stage in (LayoutStage(run), ReaderStage(run), EscalationStage(run)):
        assert [(r.doc, r.kind, r.obj) for r in rows_of(stage(table_of(rows)))] == [(r.doc, r.kind, r.obj) for r in rows]
    assert built == []


def test_an_engine_that_cannot_load_fails_its_pages_with_the_reason(tmp_path, monkeypatch):
    """As in convert: the page comes out failed, naming file, page and the engine's error."""
    from pagerouter.bench.synth import add_scanned_page
    from pagerouter.flow import engines

    d = pymupdf.open()
    add_scanned_page(d, ["A scanned page."])
    d.save(tmp_path / "scan.pdf")
    cfg = PagerouterConfig.model_validate({"isolation": {"enabled": False}})
    run = _bulk_run(cfg)

    def broken(role, cfg):
        raise RuntimeError("model file missing")
    monkeypatch.setattr(engines, "build_engine", broken)
    triaged = _triaged(tmp_path / "scan.pdf", run)
    rows = rows_of(LayoutStage(run)(table_of([r for r in triaged if r.kind == "ocr"])))
    (page, _), = rows[0].obj.pages
    assert page.status == "failed" and "scan.pdf" in page.error and "model file missing" in page.error


def test_a_process_closes_its_cached_isolation_pools_at_exit(monkeypatch):
    """The triage tasks' per-process isolation pool is closed by an exit hook registered with it."""
    from types import SimpleNamespace

    from pagerouter.batch import ray_stages

    registered = []
    fake_atexit = SimpleNamespace(register=lambda fn, *a, **k: registered.append(fn) or fn)
    monkeypatch.setattr(ray_stages, "atexit", fake_atexit)  # FAKE: records, never runs at exit
    monkeypatch.setattr(ray_stages, "_CACHE", {})
    cfg = PagerouterConfig.model_validate({"isolation": {"enabled": True}})
    run = _bulk_run(cfg)
    work = ray_stages._page_work(run)
    assert ray_stages._page_work(run) is work and registered == [ray_stages.close_page_works]
    closed = []
    monkeypatch.setattr(work, "close", lambda: closed.append(work))
    registered[0]()
    assert closed == [work] and ray_stages._CACHE == {("cfg", run.cfg_json): ray_stages._cfg(run)}


class FakeMailbox:
    """Test double of the handle of the driver's mailbox actor (`early_pages.Mailbox`):
    `post.remote(rows)` keeps the rows here."""

    def __init__(self):
        from types import SimpleNamespace

        self.rows: list[tuple] = []
        self.post = SimpleNamespace(remote=self.rows.extend)


def test_an_open_task_bounds_what_it_holds_and_sends_on(tmp_path, monkeypatch):
    """An open task of 16 scanned files of 30 pages made one bundle of 5.5 GB (12 MB an OCR page):
    more than Ray grants a task's arguments, so the run waited for ever, CPUs idle. A bundle now
    holds at most BUNDLE_BYTES (a row over it alone), and past OPEN_TASK_BYTES of rows the task's
    files go out as ranges for the triage tasks instead of being triaged in place; every page
    arrives once either way."""
    from pagerouter.batch import ray_stages
    from pagerouter.bench.synth import add_scanned_page

    jobs = []
    for i in range(3):
        d = pymupdf.open()
        for j in range(2):
            add_scanned_page(d, [f"Scanned file {i} page {j + 1}"])
        d.save(tmp_path / f"s{i}.pdf")
        d.close()
        jobs.append(FileJob("", str(tmp_path / f"s{i}.pdf"), f"s{i}.pdf", {}))
    run = _bulk_run(PagerouterConfig())  # two pages a range: each file fits one
    bundle_bytes = 1 << 20  # under one OCR page's row
    monkeypatch.setattr(ray_stages, "BUNDLE_BYTES", bundle_bytes)
    monkeypatch.setattr(ray_stages, "OPEN_TASK_BYTES", 1)  # the first file's rows pass it

    opened = rows_of(open_files(table_of([Row(i, "file", dump(j)) for i, j in enumerate(jobs)]), run))
    assert sorted(r.kind for r in opened) == ["bundle"] * 3 + ["range"] * 2
    for b in (r for r in opened if r.kind == "bundle"):  # s0's rows: its pages, its 2 OCR pages
        assert len(b.obj) == 1 or sum(len(p) for _, _, p in b.obj) <= bundle_bytes
    ranged = [(j.doc, j.start, j.stop) for r in opened if r.kind == "range" for j in r.obj]
    assert ranged == [(1, 0, 2), (2, 0, 2)]  # s1, s2: past the bound, each a range
    triaged = [r for row in opened for r in rows_of(triage_ranges(table_of([row]), run))]
    ocr = sorted((r.doc, r.obj.outcome.task.number) for r in triaged if r.kind == "ocr")
    assert ocr == [(i, n) for i in range(3) for n in (1, 2)]  # every scanned page, once
    assert sorted(r.doc for r in triaged if r.kind == "pages") == [0, 1, 2]


def test_open_tasks_share_the_scans_and_triage_each_where_they_opened_it(tmp_path, monkeypatch):
    """Files go to the open tasks (`from_items`' contiguous blocks) largest first, one to each
    task in turn (`ray_driver.open_task_order`). In the given order a folder of scans named
    after the born-digital files filled the last task, which passed `OPEN_TASK_BYTES` after two
    of them: the rest it opened for their page count only, for a triage task to fetch and open
    again. Dealt, each task holds two and triages both in place; every page arrives once."""
    import numpy as np

    from pagerouter.batch import ray_stages
    from pagerouter.batch.ray_driver import open_task_order
    from pagerouter.bench.synth import add_scanned_page

    paths = []
    for i in range(4):
        d = pymupdf.open()
        add_text_page(d, [LOREM, f"Born-digital file {i}."], title=f"File {i}")
        paths.append(tmp_path / f"a{i}.pdf")
        d.save(paths[-1])
    for i in range(4):
        d = pymupdf.open()
        for j in range(2):
            add_scanned_page(d, [f"Scanned file {i} page {j + 1}"])
        paths.append(tmp_path / f"s{i}.pdf")
        d.save(paths[-1])
    jobs = [Row(i, "file", dump(FileJob("", str(p), p.name, {}))) for i, p in enumerate(paths)]
    run = _bulk_run(PagerouterConfig())  # two pages a range: each file fits one
    one_scan = sum(r.size for r in rows_of(open_files(table_of([jobs[4]]), run)))
    monkeypatch.setattr(ray_stages, "OPEN_TASK_BYTES", int(1.5 * one_scan))  # a task triages two scans in place

    def opened(order: list[int]) -> list[Row]:
        return [r for block in np.array_split(np.array(order), 2)  # from_items' 2 blocks of 4
                for r in rows_of(open_files(table_of([jobs[i] for i in block]), run))]

    given = opened(list(range(8)))
    assert sorted(j.doc for r in given if r.kind == "range" for j in r.obj) == [6, 7]  # opened twice

    order = open_task_order([p.stat().st_size for p in paths], 2)
    assert sorted(order) == list(range(8))
    assert [sorted(i >= 4 for i in block) for block in np.array_split(np.array(order), 2)] == [[False] * 2 + [True] * 2] * 2
    dealt = opened(order)
    assert not [r for r in dealt if r.kind == "range"]
    triaged = [r for row in dealt for r in rows_of(triage_ranges(table_of([row]), run))]
    assert sorted((r.doc, r.obj.outcome.task.number) for r in triaged if r.kind == "ocr") == [
        (i, n) for i in range(4, 8) for n in (1, 2)]
    assert sorted(r.doc for r in triaged if r.kind == "pages") == list(range(8))


def test_files_of_one_size_keep_their_order_in_the_open_tasks():
    import numpy as np

    from pagerouter.batch.ray_driver import open_task_order

    assert open_task_order([0] * 7, 3) == list(range(7))  # URIs: sizes not looked up
    assert open_task_order([], 3) == []
    assert open_task_order([5, 1, 9], 1) == [1, 0, 2]  # one task: smallest first, its posts come sooner
    sizes = [10] * 270 + [115_000_000] * 30
    order = open_task_order(sizes, 19)
    assert sorted(order) == list(range(300))
    assert sorted(sum(sizes[i] > 10 for i in b) for b in np.array_split(np.array(order), 19)) == [1] * 8 + [2] * 11


def test_finished_pages_are_posted_early_and_taken_once_whichever_copy_comes_first(tmp_path):
    """The open and triage tasks post the pages they finish to the driver's mailbox
    (batch/early_pages.py): a short file's from its open task, a long file's per range from its
    triage tasks; a scan's OCR page is not posted (it goes on to the pools). The assembler then
    gets every page twice or three times (the posted copy, the dataset's, a retried task's
    second post) and takes each once: one done record per file, every page once in it, the
    Markdown `convert` writes."""
    d = pymupdf.open()
    for i in range(5):
        add_text_page(d, [LOREM, f"Part {i + 1} of five."], title=f"Part {i + 1}", header="Running head", footer=str(i + 1))
    d.save(tmp_path / "five.pdf")
    d = pymupdf.open()
    add_text_page(d, [LOREM], title="One page")
    d.save(tmp_path / "one.pdf")
    cfg = PagerouterConfig.model_validate({"isolation": {"enabled": False}})
    run = RunSpec(cfg.model_dump_json(), None, None, "auto", (), False, 900.0, "bulk wait", False, 2)
    srcs = [tmp_path / "five.pdf", tmp_path / "one.pdf", _doubted_scan(tmp_path)]
    box = FakeMailbox()
    files = table_of([Row(i, "file", dump(FileJob("", str(p), p.name, {}))) for i, p in enumerate(srcs)])
    opened = rows_of(open_files(files, run, mailbox=box))
    assert [(doc, kind) for doc, kind, *_ in box.rows] == [(1, "pages")], "the open task posts its finished file"
    triaged = [r for row in opened for r in rows_of(triage_ranges(table_of([row]), run, mailbox=box))]
    posted = [Row(*t) for t in box.rows]
    assert [(r.doc, r.kind) for r in posted] == [(1, "pages")] + [(0, "pages")] * 3, "one post per range of five.pdf"
    assert sorted(p.number for r in posted if r.doc == 0 for p, _ in r.obj.pages) == [1, 2, 3, 4, 5]
    assert {r.kind for r in triaged if r.doc == 2} == {"pages", "ocr"}  # the scan's: an empty `pages` row, its OCR row

    out = tmp_path / "out"
    items = sorted(plan_items([str(p) for p in srcs[:2]]), key=lambda i: i.path.endswith("one.pdf"))
    journal = Journal(tmp_path, (0, 1))
    asm = Assembler(items, Output(str(out)), journal, tmp_path, lambda doc: (to_markdown(doc, cfg.output), to_json(doc)),
                    config_hash(cfg, {}), None, {}, "r1", (0, 1), 3)
    asm.take(posted[:2])  # one.pdf done, five.pdf's first range staged
    asm.take([r for r in triaged if r.doc in (0, 1)])  # the dataset's copies
    asm.take(posted)  # a retried task posts again
    asm.close(complete=True)
    journal.close()
    recs = read_records(tmp_path)
    assert sorted(Path(r["input"]).name for r in recs) == ["five.pdf", "one.pdf"]
    assert all(r["status"] == "done" for r in recs)
    assert sorted((Path(r["input"]).name, len(r["page_rows"])) for r in recs) == [("five.pdf", 5), ("one.pdf", 1)]
    assert asm.pages_in == 6
    with Converter(cfg) as conv:
        for p in srcs[:2]:
            want = conv.convert(str(p), name=p.name, wait="bulk")
            assert (out / f"{p.stem}.md").read_text() == to_markdown(want, cfg.output), p.name


class _CountedRepr:
    """A page whose repr is counted: a range's real result holds its pages' renders and PDFs,
    12 MB an OCR page, and a repr of that in full costs tens of milliseconds a page."""

    shown = 0

    def __repr__(self):
        type(self).shown += 1
        return "_CountedRepr()"


def test_a_triage_task_never_formats_the_pages_it_made(tmp_path, monkeypatch):
    """A triage task runs its range's walk in the process's main thread (as Ray runs a task), where
    `asyncio.run` installs its SIGINT handler and, leaving, formats that handler's repr, the main
    task's, so the task's whole result (CPython 3.11): 0.85 CPU-s per 32 OCR pages. The range's
    pages must come out without their repr ever being made."""
    import threading

    from pagerouter.batch import ray_stages
    from pagerouter.batch.ray_stages import DocHeader

    assert threading.current_thread() is threading.main_thread()

    async def triaged(job, run):
        return [_CountedRepr(), _CountedRepr()], []

    monkeypatch.setattr(ray_stages, "_triage_range", triaged)
    monkeypatch.setattr(_CountedRepr, "shown", 0)
    job = RangeJob(0, DocHeader("sha", 2, 2, pymupdf.VersionBind, False), "", "x.pdf", "x.pdf", 0, 2)
    cfg = PagerouterConfig.model_validate({"ocr": {"enabled": False}, "isolation": {"enabled": False}})
    run = RunSpec(cfg.model_dump_json(), None, None, "auto", (), False, 900.0, "bulk wait", False, 8)
    (row,) = rows_of(triage_ranges(table_of([Row(0, "range", dump([job]))]), run))
    assert row.kind == "pages" and [type(p) for p, _ in row.obj.pages] == [_CountedRepr, _CountedRepr]
    assert _CountedRepr.shown == 0


def test_one_cpu_pool_actor_pickles_an_ocr_page_once_on_its_way_out(tmp_path, monkeypatch):
    """In one `CpuPool` actor a page's object goes from layout to reader to escalation in hand:
    pickled once, as the finished page leaving the actor, not after each stage (an OCR page is
    12 MB; each stage used to pickle it for the next, which unpickled it again). What comes out
    is the Converter's page (test_one_cpu_pool_actor_runs_the_three_stages_on_one_load_of_each_model)."""
    from pagerouter.batch import ray_stages
    from pagerouter.batch.ray_stages import CpuPool, OcrWork, PagesOut
    from pagerouter.flow import engines

    _doubted_scan(tmp_path)
    cfg = PagerouterConfig.model_validate({"isolation": {"enabled": False}})
    run = _bulk_run(cfg)
    fakes = _fake_engines(monkeypatch)
    monkeypatch.setattr(engines, "build_engine", lambda role, cfg: fakes[role])
    ocr_rows = [r for r in _triaged(tmp_path / "scan.pdf", run) if r.kind == "ocr"]
    pickled = []
    real_dump = ray_stages.dump_parts
    monkeypatch.setattr(ray_stages, "dump_parts", lambda obj: pickled.append(type(obj)) or real_dump(obj))
    pool = CpuPool(run, (LayoutStage, ReaderStage, EscalationStage))
    (row,) = rows_of(pool(table_of(ocr_rows)))
    (page, engines_ran), = row.obj.pages
    assert [role for role, _, _ in engines_ran] == ["layout", "small_reader", "escalation"]
    assert page.blocks[0].text == "escalated reading"
    assert pickled == [PagesOut] and OcrWork not in pickled
    pool.close()


def test_rows_come_back_from_their_table_as_they_went_in():
    """`table_of` builds the payload column over one joined buffer: empty payloads, an empty
    batch and several rows come back from `rows_of` unchanged."""
    rows = [Row(1, "pages", b"xy"), Row(2, "docs", b""), Row(7, "ocr", bytes(range(256)) * 3)]
    assert rows_of(table_of(rows)) == rows
    assert rows_of(table_of([])) == []
    assert table_of(rows).schema.field("payload").type == table_of([]).schema.field("payload").type


def test_a_page_render_travels_beside_its_row_and_is_not_copied_on_the_way(tmp_path):
    """An OCR page's render (~12 MB) rides out of band: its row's payload is the small rest of
    the page, the `buffers` column is made over the render's own memory, and the triage task's
    unbundling hands it on without copying it. What the pool gets back is the same pixels, as a
    read-only view (in Ray, of the object store's memory)."""
    import numpy as np

    cfg = PagerouterConfig.model_validate({"isolation": {"enabled": False}})
    run = _bulk_run(cfg)
    _doubted_scan(tmp_path)
    opened = open_files(table_of([Row(0, "file", dump(FileJob("", str(tmp_path / "scan.pdf"), "scan.pdf", {})))]), run)
    (bundle,) = rows_of(opened)
    assert bundle.kind == "bundle"
    triaged = triage_ranges(table_of([bundle]), run)
    (ocr,) = [r for r in rows_of(triaged) if r.kind == "ocr"]
    image = ocr.obj.outcome.task.image
    assert image.nbytes > 1_000_000 and len(ocr.payload) < image.nbytes / 10
    assert not image.flags.writeable

    # rows_of hands out the table's memory; the render the triage task passed on is the one in
    # the open task's table (the bundle's first buffer), not a copy
    assert bundle.buffers[0].address == opened.column("buffers").chunk(0).values.buffers()[2].address
    assert ocr.buffers[0].address == bundle.buffers[0].address
    assert np.frombuffer(ocr.buffers[0], np.uint8).ctypes.data == image.ctypes.data
    # a row's table is made over its render's memory
    (again,) = rows_of(table_of([Row.of(0, "ocr", ocr.obj)]))
    again_image = again.obj.outcome.task.image
    assert np.array_equal(again_image, image)
    own = np.ascontiguousarray(image.copy())
    assert table_of([Row.of(0, "ocr", own)]).column("buffers").chunk(0).values.buffers()[2].address == own.ctypes.data


class FakeMeter:
    """FAKE `_Meter`: every metered block took exactly 1 CPU-second."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.cpu, self.wall = 1.0, 0.5


def test_each_pool_stage_s_cpu_reaches_the_page_it_finishes(tmp_path, monkeypatch):
    """The summary's CPU per page (and its $ per million pages) sums each page's share of every
    stage. The stage that finishes a page (the reader, or escalation for a flagged one) built its
    page's result inside its work, before its own CPU was measured: that CPU must reach the result
    too, not only the page's work item, which goes no further."""
    from pagerouter.batch import ray_stages

    _doubted_scan(tmp_path)
    for escalate, stages, want_more in ((True, (LayoutStage, ReaderStage, EscalationStage), 3.0),
                                        (False, (LayoutStage, ReaderStage), 2.0)):
        cfg = PagerouterConfig.model_validate({"isolation": {"enabled": False},
                                               "ocr": {"escalation": {"enabled": escalate}}})
        run = _bulk_run(cfg)
        _fake_engines(monkeypatch)
        ocr_rows = [r for r in _triaged(tmp_path / "scan.pdf", run) if r.kind == "ocr"]
        triage_share = ocr_rows[0].obj.cpu_s
        with monkeypatch.context() as m:
            m.setattr(ray_stages, "_Meter", FakeMeter)
            rows = ocr_rows
            for stage in stages:
                rows = rows_of(stage(run)(table_of(rows)))
        (row,) = rows
        assert row.kind == "pages"
        assert row.obj.cpu_s == pytest.approx(triage_share + want_more)  # one CPU-second from each stage


def test_a_pool_actor_s_sessions_run_its_share_of_the_cores(monkeypatch):
    """Two pool actors on two cores, each running a thread per core in every model session,
    took turns on the cores; one thread each would leave a big machine's cores idle under the
    default pools of two actors. An actor's engines get the machine's cores over the pipeline's
    actors, never fewer than the CPUs it reserves (floor, at least 1; `_engines`: the driver
    passes each pool's `num_cpus` and the pools' max_size summed), and an explicit
    `ocr.onnx_threads` stays."""
    import os

    from pagerouter.batch.ray_stages import CpuPool

    run = _bulk_run(PagerouterConfig())
    stages = (LayoutStage, ReaderStage, EscalationStage)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    assert CpuPool(run, stages, cpus=0.5, actors=2).engines.cfg.onnx_threads == 1  # this machine, the defaults
    assert CpuPool(run, stages, cpus=4, actors=2).engines.cfg.onnx_threads == 4  # what it reserves, at least
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(32)))
    assert CpuPool(run, stages, cpus=0.5, actors=2).engines.cfg.onnx_threads == 16
    assert LayoutStage(run, cpus=1, actors=64).engines.cfg.onnx_threads == 1
    assert LayoutStage(run, cpus=2.5, actors=64).engines.cfg.onnx_threads == 2
    assert CpuPool(run, stages).engines.cfg.onnx_threads == 0  # no reservation given: onnxruntime's own
    own = _bulk_run(PagerouterConfig.model_validate({"ocr": {"onnx_threads": 3}}))
    assert ReaderStage(own, cpus=0.5, actors=2).engines.cfg.onnx_threads == 3


def test_the_driver_s_scheduling_loop_waits_the_setting_for_the_run_and_then_ray_data_s_own():
    from ray.data._internal.execution import streaming_executor_state as loop

    from pagerouter.batch.ray_driver import scheduler_wait

    # the loop reads the module's constant at each step (a global, not a value bound at import)
    assert "WAIT_FOR_TASK_COMPLETION_TIMEOUT_S" in loop.process_completed_tasks.__code__.co_names
    own = loop.WAIT_FOR_TASK_COMPLETION_TIMEOUT_S
    wait = PagerouterConfig().batch.scheduler_wait_s
    assert wait > own
    with scheduler_wait(wait):
        assert loop.WAIT_FOR_TASK_COMPLETION_TIMEOUT_S == wait
    assert loop.WAIT_FOR_TASK_COMPLETION_TIMEOUT_S == own
    with pytest.raises(RuntimeError), scheduler_wait(0.7):
        assert loop.WAIT_FOR_TASK_COMPLETION_TIMEOUT_S == 0.7
        raise RuntimeError("the pipeline stopped")
    assert loop.WAIT_FOR_TASK_COMPLETION_TIMEOUT_S == own
