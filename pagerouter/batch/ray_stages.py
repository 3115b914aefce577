"""The stages of `pagerouter batch --ray` as Ray Data UDFs, over the very stage objects the
`Converter` and the Serve deployments run (no Ray import here: Ray Data hands these functions
and classes pyarrow tables, and they return pyarrow tables).

    file rows ─► open_files (CPU tasks: hash, journal check, the file's walk (`walk.
                 walk_document`: open, page selection); a file that fits one range is triaged
                 there on the same walk, a longer one cut into page ranges)
              ─► triage_ranges (CPU tasks: the file's walk over one range: triage, text
                 layers, render for OCR, in MuPDF isolation workers; an open task's other
                 rows arrive in `bundle` rows and are unpacked here)
    An open task triages in place only up to `OPEN_TASK_BYTES` of rows (an OCR page's row is
    ~12 MB); its files past that go out as ranges, and its bundles hold `BUNDLE_BYTES` at most,
    so neither the task nor any one row outgrows what Ray grants a task.
              ─► LayoutStage ─► ReaderStage ─► EscalationStage (`EngineSet` engines;
                 batched engine calls as in the Serve deployments), one after another in
                 one actor pool (`CpuPool`) unless a stage asks a GPU: that one has a pool
                 of its own
              ─► the driver (ray_driver.py) assembles each document in page order
    (the open and triage tasks also post their finished pages straight to the driver's mailbox,
    `early_pages.py`: the dataset's copy reaches it only after the pools' queues)

Every row is {doc, kind, payload, buffers}: `doc` the input's index, `payload` a pickled object
of this module, `buffers` its large buffers (a page render's pixels, a page's own PDF), pickled
out of band and never copied between stages (`Row`). A stage works on the kinds it owns and passes every other row through untouched, so
born-digital pages leave as one `pages` row per file or range and never reach a model tier;
only pages that need one travel as `ocr` rows (the page render, never the file's bytes).
The OCR path's orchestration is `pipeline.convert_pages` itself, fed by replayed stage
calls: the layout and reading computed by the pools upstream are what its `OcrCalls` return
(as deployment handles return them in the Serve graph), and only the escalation tier's call
runs for real in its own pool. The reader pool checks the first reading (`pipeline.
first_reading`) and asks the pipeline's rule (`pipeline.escalates`) whether the page goes on;
each page goes through `convert_pages` once, in the pool that finishes it (the escalation
pool runs the rest of the flow, `pipeline.escalated_reading`). So the checks, the escalation
rule, the timeout fallback and the page status rules are the Converter's, and the Markdown is
byte-identical. Each actor's engines close with it (`_PoolStage.close`), and a process's
isolation pools at its exit (`close_page_works`).
"""

from __future__ import annotations

import asyncio
import atexit
import hashlib
import pickle
import time
from contextlib import aclosing
from dataclasses import dataclass, field

ROLE_ORDER = ("layout", "small_reader", "escalation")  # the order a Converter first calls them in


@dataclass
class RunSpec:
    """What every stage needs of the run (small; shipped once per task or actor)."""

    cfg_json: str
    pages: str | None
    password: str | None
    ocr: str
    languages: tuple[str, ...]
    images: bool
    escalation_s: float
    escalation_why: str
    filter_on: bool
    pages_per_range: int
    gpus: dict[str, float] = field(default_factory=dict)  # role -> GPUs per actor, for GPU-seconds


@dataclass
class FileJob:
    scheme: str
    path: str
    shown: str
    skip: dict  # {sha256 or None: status} of journal records that make this file skip under this config
    staged: tuple[str, list[int]] | None = None  # (sha256, page numbers) an earlier run already staged


@dataclass
class DocHeader:
    """Travels with every row of a document, so the driver learns its shape from whichever comes first."""

    sha: str
    page_count: int
    total: int  # pages selected
    pymupdf: str
    staged: bool  # the open stage left out the pages of the driver's staging file (same bytes)
    open_cpu_s: float = 0.0


@dataclass
class DocResult:
    """A file that needs no (more) page work: skip, failed, filtered, or staged (all its pages are)."""

    doc: int
    status: str
    sha: str | None = None
    error: str | None = None
    header: DocHeader | None = None
    reasons: list = field(default_factory=list)
    scores: dict = field(default_factory=dict)
    cpu_s: float = 0.0


@dataclass
class RangeJob:
    doc: int
    header: DocHeader
    scheme: str
    path: str
    name: str
    start: int  # indices into the document's selected page numbers
    stop: int


@dataclass
class OcrWork:
    header: DocHeader
    name: str
    outcome: object  # pipeline.TriageOutcome with its OcrTask
    layout: object = None  # LayoutResult, or the exception the layout engine raised for this page
    layout_s: float = 0.0
    reading: object = None  # the small reader's Reading (checked, on its way to escalation), or its exception
    read_s: float = 0.0
    engines: list = field(default_factory=list)  # (role, name, version) of engines that ran
    cpu_s: float = 0.0
    gpu_s: float = 0.0


@dataclass
class PagesOut:
    header: DocHeader
    pages: list  # [(Page, [(role, name, version)])]
    cpu_s: float = 0.0
    gpu_s: float = 0.0


# ---------------------------------------------------------------------------- rows
@dataclass
class Row:
    """One row of the pipeline. `buffers`: the payload's out-of-band pickle buffers (protocol 5:
    a page render's pixels), kept out of `payload` so that no stage copies them into or out of
    a bytes object: `table_of` makes an Arrow column over them as they are and `rows_of` hands
    out views of the block's memory. An OCR page's render is ~12 MB, and carried in-band it
    was copied some ten times between the isolation worker and the pool that reads it (pickled
    into its row, into a bundle, joined into a column, read out of one, unpickled, ...)."""

    doc: int
    kind: str
    payload: bytes
    buffers: tuple = ()

    @classmethod
    def of(cls, doc: int, kind: str, obj) -> Row:
        return cls(doc, kind, *dump_parts(obj))

    @property
    def obj(self):
        return pickle.loads(self.payload, buffers=self.buffers)

    @property
    def size(self) -> int:
        """Bytes the row carries (payload and buffers)."""
        return len(self.payload) + sum(memoryview(b).nbytes for b in self.buffers)

    def portable(self) -> tuple:
        """The row as a tuple any pickler takes (`Row(*t)` makes it again): its buffers wrapped
        so that a protocol-5 pickler with a buffer callback (Ray's, a bundle's) keeps them out of
        band in turn."""
        return self.doc, self.kind, self.payload, tuple(pickle.PickleBuffer(b) for b in self.buffers)


class HeldRow(Row):
    """A row whose object is still in hand: from one stage of an actor to the next (`CpuPool`)
    it is not pickled and unpickled again (an OCR page is 12 MB: its render and its page's
    PDF), only when it leaves the actor (`table_of`)."""

    def __init__(self, doc: int, kind: str, obj):
        self.doc, self.kind, self._obj, self._parts = doc, kind, obj, None

    def _dumped(self) -> tuple[bytes, tuple]:
        if self._parts is None:
            self._parts = dump_parts(self._obj)
        return self._parts

    @property
    def payload(self) -> bytes:
        return self._dumped()[0]

    @property
    def buffers(self) -> tuple:
        return self._dumped()[1]

    @property
    def obj(self):
        return self._obj


def dump(obj) -> bytes:
    """`obj` pickled whole (its buffers in band): what travels as a plain bytes payload."""
    return pickle.dumps(obj, protocol=5)


# A dataclass's bytes fields at least this large leave the payload too (a scanned page's own PDF,
# `OcrTask.page_bytes`, is about as large as its render: 3.9 MB for the bench's scans); smaller
# ones cost less in band than a buffer of their own.
OUT_OF_BAND_BYTES = 64 << 10


class _OutOfBandPickler(pickle.Pickler):
    """Protocol 5 with a buffer callback keeps a numpy array's data out of band, but a bytes
    object always goes in band, and the pickler does not consult `reducer_override` for one:
    a dataclass's large bytes fields are handed over as buffers here instead, and made bytes
    again (one copy) only where the row's object is finally unpickled."""

    def reducer_override(self, obj):
        fields = getattr(obj, "__dataclass_fields__", None)
        if fields is None or isinstance(obj, type) or not hasattr(obj, "__dict__"):
            return NotImplemented
        state = vars(obj)
        big = tuple(k for k, v in state.items() if type(v) is bytes and len(v) >= OUT_OF_BAND_BYTES)
        if not big:
            return NotImplemented
        state = dict(state)
        for k in big:
            state[k] = pickle.PickleBuffer(state[k])
        return _dataclass_with_bytes, (type(obj), state, big)


def _dataclass_with_bytes(cls, state: dict, big: tuple):
    obj = cls.__new__(cls)
    for k in big:
        state[k] = bytes(state[k])
    obj.__dict__.update(state)
    return obj


def dump_parts(obj) -> tuple[bytes, tuple]:
    """`obj` pickled with its buffers out of band (a numpy array's pixels, a page's PDF stay
    where they are): the payload and the buffers, as views (`Row.buffers`)."""
    import io

    bufs: list = []
    out = io.BytesIO()
    _OutOfBandPickler(out, protocol=5, buffer_callback=bufs.append).dump(obj)
    return out.getvalue(), tuple(b.raw() for b in bufs)


def rows_of(batch) -> list[Row]:
    """The rows of a pyarrow table (`table_of`'s). Buffers come as read-only `pa.Buffer` slices
    of the table's memory (in a Ray block, of the object store's): nothing is copied out."""
    cols = [batch.column(c).to_pylist() for c in ("doc", "kind", "payload")]
    if "buffers" in batch.column_names:
        bufs = [b for chunk in batch.column("buffers").chunks for b in _buffers_of(chunk)]
    else:
        bufs = [()] * batch.num_rows
    return [Row(d, k, p, b) for d, k, p, b in zip(*cols, bufs)]


def _buffers_of(chunk) -> list[tuple]:
    """Each row's buffers of one chunk of the `buffers` column, as slices of its data buffer
    (a scalar's `as_buffer` copies its bytes), read-only (a slice says it is mutable even over
    a block's memory)."""
    import numpy as np
    import pyarrow as pa

    rows = chunk.offsets.to_numpy()  # into chunk.values, the chunk's own slice taken into account
    values = chunk.values
    _, offsets, data = values.buffers()
    at = np.frombuffer(offsets, dtype=np.int64)[values.offset:values.offset + len(values) + 1]
    whole = memoryview(data).toreadonly() if data is not None else None
    return [tuple(pa.py_buffer(whole[at[j]:at[j + 1]]) for j in range(rows[i], rows[i + 1]))
            for i in range(len(chunk))]


def table_of(rows: list[Row]):
    """The rows as a pyarrow table. The payloads are joined into one buffer and the column made
    over it (one copy): `pa.array` of the bytes grows its buffer as it appends, and an OCR row
    was 12 MB (the page render and the page's own PDF), so a 32-page range cost 0.93 CPU-s here
    against 0.16 joined. The buffers are not copied: each row's are one chunk of the
    `buffers` column, made over their memory (`_buffers_chunk`)."""
    import pyarrow as pa

    payloads = [r.payload for r in rows]
    return pa.table({
        "doc": pa.array([r.doc for r in rows], pa.int64()),
        "kind": pa.array([r.kind for r in rows], pa.string()),
        "payload": _binary_over(payloads, pa.py_buffer(b"".join(payloads))),
        "buffers": pa.chunked_array([_buffers_chunk(r.buffers) for r in rows],
                                    type=pa.large_list(pa.large_binary())),
    })


def _binary_over(parts: list, data):
    """A large_binary array of `parts`, whose bytes lie one after another in `data` (a pa.Buffer)."""
    import numpy as np
    import pyarrow as pa

    offsets = np.zeros(len(parts) + 1, dtype=np.int64)
    np.cumsum([memoryview(p).nbytes for p in parts], out=offsets[1:])
    return pa.LargeBinaryArray.from_buffers(pa.large_binary(), len(parts), [None, pa.py_buffer(offsets), data])


def _buffers_chunk(buffers: tuple):
    """One row of the `buffers` column: a list of its buffers, made over their own memory (read-only,
    as a Ray block's are). A row's several buffers are one data buffer: spanned where they already
    lie one after another (a bundle's rows, unpacked: slices of the bundle's block), else joined."""
    import numpy as np
    import pyarrow as pa

    bufs = [b if isinstance(b, pa.Buffer) else pa.py_buffer(memoryview(b).toreadonly()) for b in buffers]
    if len(bufs) == 1:
        data = bufs[0]
    elif bufs and all(a.address + a.size == b.address for a, b in zip(bufs, bufs[1:])):
        data = pa.foreign_buffer(bufs[0].address, sum(b.size for b in bufs), base=bufs)
    else:
        data = pa.py_buffer(b"".join(bufs))
    values = _binary_over(bufs, data)
    return pa.LargeListArray.from_arrays(pa.array(np.array([0, len(bufs)], dtype=np.int64)), values)


def run_async(coro):
    """`asyncio.run(coro)`'s result, which asyncio.run never gets to see. In a process's main
    thread (where Ray runs a task) asyncio.run installs a SIGINT handler bound to its main task
    and, on the way out, `signal.getsignal` turns that handler into an enum, fails, and formats
    the failure with the handler's repr: the task's, so its result's, in full. A range's result
    holds its pages' renders and PDFs, and that repr cost 0.85 CPU-s per 32 OCR pages (CPython
    3.11's runners.py and signal.py)."""
    box: list = []

    async def main():
        box.append(await coro)

    asyncio.run(main())
    return box[0]


class _Meter:
    """CPU seconds (this process and its isolation workers) and wall seconds of a block of work."""

    def __enter__(self):
        from pagerouter.bench.metrics import process_tree_cpu

        self._cpu, self.cpu0, self.t0 = process_tree_cpu, process_tree_cpu(), time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.cpu, self.wall = self._cpu() - self.cpu0, time.perf_counter() - self.t0


# ---------------------------------------------------------------------------- per-process state
_CACHE: dict[tuple[str, str], object] = {}


def _cfg(run: RunSpec):
    from pagerouter.config import PagerouterConfig

    key = ("cfg", run.cfg_json)
    if key not in _CACHE:
        _CACHE[key] = PagerouterConfig.model_validate_json(run.cfg_json)
    return _CACHE[key]


def _page_work(run: RunSpec):
    """This worker process's PageWork (isolation pool), kept across tasks: its workers start once,
    and stop when the process exits (`close_page_works`, registered with the first pool)."""
    from pagerouter.isolation import page_work

    key = ("work", run.cfg_json)
    if key not in _CACHE:
        if not any(k[0] == "work" for k in _CACHE):
            atexit.register(close_page_works)
        _CACHE[key] = page_work(_cfg(run))
    return _CACHE[key]


def close_page_works() -> None:
    """Close this process's cached isolation pools (at exit: a Ray worker process that ran
    triage tasks ends its MuPDF workers itself, not by leaving them to their own watch)."""
    for key in [k for k in _CACHE if k[0] == "work"]:
        _CACHE.pop(key).close()


# ---------------------------------------------------------------------------- CPU tasks
def ranges(todo: list[int], size: int) -> list[tuple[int, int]]:
    """Contiguous runs of the indices `todo`, cut into spans of at most `size`."""
    out: list[tuple[int, int]] = []
    for i in todo:
        if out and out[-1][1] == i and out[-1][1] - out[-1][0] < size:
            out[-1] = (out[-1][0], i + 1)
        else:
            out.append((i, i + 1))
    return out


def _open_one(doc: int, job: FileJob, run: RunSpec, in_place: bool = True) -> DocResult | list[RangeJob] | Triaged:
    """One file of an open task. `in_place`: a file that fits one range may be triaged here (else
    it is cut into ranges like a long file)."""
    import pymupdf

    from pagerouter.intake.inputs import InputError

    from .failures import file_error
    from .fsio import read_input

    try:
        data = read_input(job.scheme, job.path, job.shown)
    except InputError as exc:
        if None in job.skip:  # still unreadable: its failed record stands
            return DocResult(doc, "skip")
        return DocResult(doc, "failed", error=file_error(job.shown, exc))
    sha = hashlib.sha256(data).hexdigest()
    if sha in job.skip:
        return DocResult(doc, "skip", sha)
    cfg = _cfg(run)
    if run.filter_on:
        from pagerouter.intake.docfilter import judge_file

        decision = judge_file(data, cfg.filter, isolate=cfg.isolation.enabled, password=run.password)
        if not decision.keep:
            return DocResult(doc, "filtered", sha, reasons=decision.reasons, scores=decision.scores)
    return run_async(_open_walk(doc, data, sha, job, run, pymupdf.VersionBind, in_place))


@dataclass
class Triaged:
    """A file the open task triaged whole, on the walk that opened it: its finished pages and
    its OCR pages, as a triage task's range would have sent them."""

    header: DocHeader
    finished: list
    ocr: list


async def _open_walk(doc: int, data: bytes, sha: str, job: FileJob, run: RunSpec, version: str, in_place: bool):
    """The file's walk (`walk.walk_document`), opened once. A file whose pages all fit one range
    is triaged here, on the same open document: born-digital pages never become a row of their
    own, and the file is neither fetched nor opened a second time (each was: the open task read
    and opened it for its head, the triage task read and opened it again for its pages). A longer
    file (or one with pages already staged) stops at the head and is cut into page ranges, each
    a triage task that reads this node's copy of the bytes (`local_copy`)."""
    from .failures import file_error

    # Opened here, then walked: a walk of the bytes would have the isolation worker read the first
    # pages ahead at open (`isolation.WalkAhead`), wasted on a file that turns out to be ranged.
    work = _page_work(run)
    try:
        src = await asyncio.to_thread(work.open, data, job.shown, run.password)
    except Exception as exc:  # noqa: BLE001 - InputError names the file; anything else is this file's failure
        return DocResult(doc, "failed", sha, error=file_error(job.shown, exc))
    try:
        return await _walk_opened(doc, src, data, sha, job, run, version, in_place)
    finally:
        src.close()


async def _walk_opened(doc: int, src, data: bytes, sha: str, job: FileJob, run: RunSpec, version: str,
                       in_place: bool):
    from pagerouter.convert.walk import walk_document
    from pagerouter.flow.page_status import failed_page

    from .failures import file_error

    walk = walk_document(_page_work(run), src, max_pages=_cfg(run).limits.max_pages, name=job.shown,
                         password=run.password, pages=run.pages, ocr=run.ocr, images=run.images)
    async with aclosing(walk):
        try:
            head = await anext(walk)
            page_count, numbers = head.document.page_count, head.numbers
        except Exception as exc:  # noqa: BLE001 - InputError names the file; anything else is this file's failure
            return DocResult(doc, "failed", sha, error=file_error(job.shown, exc))
        done = set(job.staged[1]) if job.staged and job.staged[0] == sha else set()
        header = DocHeader(sha, page_count, len(numbers), version, staged=bool(done))
        todo = [i for i, n in enumerate(numbers) if n not in done]
        if not todo:
            return DocResult(doc, "staged", sha, header=header)
        if done or len(todo) > run.pages_per_range or not in_place:
            keep_local_copy(sha, data)  # this node's range tasks read it, not the source again
            return [RangeJob(doc, header, job.scheme, job.path, job.shown, a, b)
                    for a, b in ranges(todo, run.pages_per_range)]
        try:
            finished, ocr = await _pages_of(walk, header, job.shown, run)
        except Exception as exc:  # noqa: BLE001 - as a triage task's range: the file's pages fail with the reason
            finished, ocr = [failed_page(job.shown, n, "triage", exc) for n in numbers], []
        return Triaged(header, finished, ocr)


def packed(jobs: list[RangeJob], size: int) -> list[list[RangeJob]]:
    """Range jobs packed into work units of at most `size` pages: a long file's ranges stay one
    unit each (they spread over the cluster), short files share one (a task per one-page file
    would cost more in Ray's overhead than its reading)."""
    units: list[list[RangeJob]] = []
    pages = 0
    for job in jobs:
        n = job.stop - job.start
        if units and pages + n <= size:
            units[-1].append(job)
            pages += n
        else:
            units.append([job])
            pages = n
    return units


def post_early(mailbox, rows: list[Row]) -> None:
    """Post `rows` (finished pages) to the driver's mailbox (`early_pages.Mailbox`), without
    waiting. Never fails the task: the same rows travel on in the dataset."""
    if mailbox is None or not rows:
        return
    try:
        mailbox.post.remote([r.portable() for r in rows])
    except Exception:  # noqa: BLE001, S110 - a shortcut only: the dataset delivers these rows too
        pass


# A bundle row's bytes at most, payloads and buffers (a row larger than this travels alone). A
# bundle is one Ray object that one triage task takes whole, and an OCR page's row is ~12 MB (its
# render and its own PDF):
# 16 scanned files of 30 pages in one bundle made a 5.5 GB object, more than Ray grants a task's
# arguments (5.1 GB on a 24 GB node), so the run waited for ever with the CPUs idle, after the
# memory monitor had killed the open task twice for holding it.
BUNDLE_BYTES = 128 << 20
# The rows an open task makes of the files it triages in place, at most (then one more file's):
# its files past that are cut into ranges for the triage tasks, which read this node's copy. The
# task returns its rows at its end (a generator would bound them too, but a task retried after
# it had yielded some blocks must then cut the same blocks again, page for page, and a page that
# timed out in one attempt and not in the other changes the cut).
OPEN_TASK_BYTES = 4 * BUNDLE_BYTES


class _Bundles:
    """Rows packed, in the order they come, into `bundle` rows of at most `BUNDLE_BYTES` each
    (payloads and buffers; a row over it alone), each bundle made as soon as it is full. The
    rows' buffers stay out of band in the bundle's own (`Row.portable`)."""

    def __init__(self):
        self.rows: list[Row] = []  # the bundles made
        self._part: list[Row] = []
        self._size = 0

    def add(self, r: Row) -> None:
        if self._part and self._size + r.size > BUNDLE_BYTES:
            self.close()
        self._part.append(r)
        self._size += r.size

    def close(self) -> list[Row]:
        """Bundle what is left; the bundles made."""
        if self._part:
            self.rows.append(Row.of(self._part[0].doc, "bundle", [x.portable() for x in self._part]))
            self._part, self._size = [], 0
        return self.rows


def open_files(batch, run: RunSpec, mailbox=None):
    """Open task: per file, a `docs` result (skip, failed, filtered, staged), its pages (a file
    that fits one range is triaged here, while the task's rows stay under `OPEN_TASK_BYTES`: a
    `pages` row and its `ocr` rows), or its page ranges, packed into `range` rows of up to
    `pages_per_range` pages. All but the ranges leave in `bundle` rows of at most
    `BUNDLE_BYTES`, packed as the files are done (the task holds each row's bytes once). A
    file's bytes are read here to hash and open it, and never put into a row. `mailbox`: the
    driver's (`early_pages`), where the finished pages are also posted."""
    jobs: list[RangeJob] = []
    results: list[DocResult] = []
    bundled = _Bundles()
    held = 0
    for row in rows_of(batch):
        with _Meter() as m:
            got = _open_one(row.doc, row.obj, run, in_place=held < OPEN_TASK_BYTES)
        if isinstance(got, DocResult):
            got.cpu_s = m.cpu
            results.append(got)
        elif isinstance(got, Triaged):
            rows = _range_rows(row.doc, got.header, got.finished, got.ocr, m.cpu)
            any_finished = bool(got.finished)
            del got  # the pages live on in their rows' bytes only
            post_early(mailbox, rows[:1] if any_finished else [])  # as each file is done, not when the task is
            for r in rows:
                bundled.add(r)
                held += r.size
            del rows
        else:
            got[0].header.open_cpu_s = m.cpu
            jobs += got
    if results:  # one row for all of them: a resumed run's skipped files cost one row per task, not each
        bundled.add(Row(results[0].doc, "docs", dump(results)))
    # the bundles travel to the triage stage, which unpacks them (`triage_ranges`)
    return table_of([Row(unit[0].doc, "range", dump(unit)) for unit in packed(jobs, run.pages_per_range)]
                    + bundled.close())


def _range_rows(doc: int, header: DocHeader, finished: list, ocr: list, cpu_s: float) -> list[Row]:
    """A range's finished pages as one `pages` row, each OCR page as an `ocr` row; `cpu_s`, the
    CPU the range took, shared evenly by its pages."""
    share = cpu_s / max(1, len(finished) + len(ocr))
    out = [Row.of(doc, "pages", PagesOut(header, [(p, []) for p in finished], share * len(finished)))]
    for w in ocr:
        w.cpu_s = share
        out.append(Row.of(doc, "ocr", w))
    return out


# ---------------------------------------------------------------------------- node-local copies
def _copies_dir():
    import tempfile
    from pathlib import Path

    return Path(tempfile.gettempdir()) / "pagerouter-batch-inputs"


def keep_local_copy(sha: str, data: bytes) -> None:
    """Keep a file's bytes on this node under their sha256, for the file's range tasks that run
    here (written whole, then renamed: a reader never sees a part)."""
    import os

    d = _copies_dir()
    d.mkdir(parents=True, exist_ok=True)
    final = d / sha
    if final.exists():
        return
    tmp = d / f"{sha}.{os.getpid()}.tmp"
    tmp.write_bytes(data)
    os.replace(tmp, final)


def local_copy(job: RangeJob) -> bytes:
    """A range's file bytes: this node's copy, else fetched from the source once per node (the
    first range task here fetches under a lock, the others wait and read its copy; a 2,000-page
    file's 16 range tasks used to fetch it 16 times). Bytes that are no longer what the open
    task hashed (the file changed since) are an error, not another file's pages."""
    import fcntl

    from .fsio import read_bytes

    sha = job.header.sha
    d = _copies_dir()
    d.mkdir(parents=True, exist_ok=True)
    final = d / sha
    with open(d / f"{sha}.lock", "a+b") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            return final.read_bytes()
        except FileNotFoundError:
            pass
        data = read_bytes(job.scheme, job.path)
        if hashlib.sha256(data).hexdigest() != sha:
            raise ValueError(f"{job.name}: the file changed since the run opened it")
        keep_local_copy(sha, data)
        return data


def drop_local_copies() -> None:
    """Remove this node's copies (called at the end of a run, on every node that kept one)."""
    import shutil

    shutil.rmtree(_copies_dir(), ignore_errors=True)


async def _triage_range(job: RangeJob, run: RunSpec) -> tuple[list, list[OcrWork]]:
    from pagerouter.convert.walk import walk_document
    from pagerouter.flow.page_status import failed_page
    from pagerouter.intake.inputs import parse_pages

    walk = None
    try:
        data = await asyncio.to_thread(local_copy, job)
        walk = walk_document(_page_work(run), data, max_pages=_cfg(run).limits.max_pages, name=job.name,
                             password=run.password, pages=run.pages, ocr=run.ocr, images=run.images,
                             span=(job.start, job.stop))
        await anext(walk)  # the head: the open task already sent it on
    except Exception as exc:  # noqa: BLE001 - it opened in the open task: a lost worker, a changed file
        if walk is not None:
            await walk.aclose()
        numbers = parse_pages(run.pages, job.header.page_count, job.name)
        return [failed_page(job.name, n, "reading", exc) for n in numbers[job.start:job.stop]], []
    async with aclosing(walk):
        return await _pages_of(walk, job.header, job.name, run)


async def _pages_of(walk, header: DocHeader, name: str, run: RunSpec) -> tuple[list, list[OcrWork]]:
    """The rest of a walk past its head: the finished pages, and the OCR pages set aside for the pools."""
    finished, ocr = [], []

    async def text_pages():
        async for outcome in walk:
            if outcome.task is None:
                yield outcome
            else:
                if run.languages:  # what convert_pages does before the OCR flow: the reader reads them first here
                    outcome.task.languages = tuple(run.languages)
                ocr.append(OcrWork(header, name, outcome))

    # Finished pages leave through `pipeline.convert_pages`, as every page of `convert` does (its
    # output hygiene: no control characters), not straight from the walk.
    from pagerouter.flow.pipeline import convert_pages

    async with aclosing(convert_pages(text_pages(), name, _cfg(run), None)) as pages:
        async for page in pages:
            finished.append(page)
    return finished, ocr


def triage_ranges(batch, run: RunSpec, mailbox=None):
    """Triage task: one work unit of page ranges; per range its finished pages as one `pages`
    row, each OCR page as an `ocr` row. A `bundle` (what an open task finished: its files'
    pages and OCR pages, its skipped and failed files) is unpacked into its rows here: the
    repartition before this stage makes every row its own block and so its own task, which
    only a range needs (to spread a long file over the nodes); a row per finished file cost a
    Ray task each for nothing. `mailbox`: as `open_files` (a bundle's pages were posted by
    its open task)."""
    out: list[Row] = []
    for row in rows_of(batch):
        if row.kind == "bundle":
            out += [Row(*t) for t in row.obj]
            continue
        if row.kind != "range":
            out.append(row)
            continue
        for job in row.obj:
            with _Meter() as m:
                try:
                    finished, ocr = run_async(_triage_range(job, run))
                except Exception as exc:  # noqa: BLE001 - one file of a shared unit must not drop the others' pages
                    from pagerouter.flow.page_status import failed_page
                    from pagerouter.intake.inputs import parse_pages

                    numbers = parse_pages(run.pages, job.header.page_count, job.name)[job.start:job.stop]
                    finished, ocr = [failed_page(job.name, n, "triage", exc) for n in numbers], []
            rows = _range_rows(job.doc, job.header, finished, ocr, m.cpu)
            post_early(mailbox, rows[:1] if finished else [])
            out += rows
    return table_of(out)


# ---------------------------------------------------------------------------- actor pools
def _storable(result):
    """A stage result fit to cross to the next stage: an exception that cannot be pickled becomes
    a RuntimeError with the same text (the page's error line reads the same)."""
    if isinstance(result, BaseException):
        try:
            pickle.dumps(result)
        except Exception:  # noqa: BLE001 - any pickling failure
            return RuntimeError(str(result) or type(result).__name__)
    return result


def _replay(value):
    """A stage call of `OcrCalls` that returns what a pool upstream already computed."""
    async def call(*_args):
        if isinstance(value, BaseException):
            raise value
        return value
    return call


def _replay_flow(reading):
    """An OCR flow (`pipeline.OcrFlow`) whose reading this stage already made (or its error)."""
    call = _replay(reading)

    async def flow(_task, _calls, _cfg):
        return await call()
    return flow


def _engines(run: RunSpec, cpus: float | None, actors: int = 1):
    """An actor's `EngineSet`, its model sessions running its share of this machine's cores
    unless `ocr.onnx_threads` says: the cores over the pipeline's `actors` (its pools' max_size
    summed: as many may share one machine), but never fewer than the `cpus` the actor reserves
    (floor, at least 1; Ray's own rule for OMP_NUM_THREADS). Actors that each ran a thread per
    core took turns on the cores at every model run; one thread each left a big machine's cores
    idle under the default pools of two actors. `cpus` None: onnxruntime's default."""
    import os

    from pagerouter.flow.engines import EngineSet
    from pagerouter.ocr.onnx_sessions import with_core_share

    ocr = _cfg(run).ocr
    if cpus is None:
        return EngineSet(ocr)
    return EngineSet(with_core_share(ocr, max(cpus, len(os.sched_getaffinity(0)) // max(1, actors))))


class _PoolStage:
    role = ""
    kind = ""  # the row kind this pool works on

    def __init__(self, run: RunSpec, engines=None, cpus: float | None = None, actors: int = 1):
        """`engines`: an `EngineSet` shared with the other stages of the same actor (`CpuPool`);
        `cpus`, `actors`: the logical CPUs this actor reserves and the pipeline's actors at most
        (`_engines`)."""
        self.run, self.cfg = run, _cfg(run)
        self.engines = engines if engines is not None else _engines(run, cpus, actors)
        self.gpus = run.gpus.get(self.role, 0.0)

    # The engine loads on the first page this actor works on, not when the actor starts: every
    # row passes every pool, born-digital ones included, and an actor that loaded its model
    # first held them all back (the first output of a born-digital file waited for the three
    # pools' models, 28 s on this machine).
    @property
    def engine(self):
        return self.engines.get(self.role)

    @property
    def label(self) -> tuple[str, str, str]:
        return (self.role, self.engine.name, self.engine.version)

    def close(self) -> None:
        """Close this actor's engines (a VLM engine stops its vLLM processes here, before
        interpreter exit, where vLLM's own clean-up fails)."""
        engines = getattr(self, "engines", None)  # absent when __init__ failed before it
        if engines is not None:
            engines.close()

    def __del__(self) -> None:
        # Ray Data drops its reference to an actor's UDF object when the actor pool shuts down
        # gracefully (`_MapWorker.__ray_shutdown__`), and this runs then.
        self.close()

    def __call__(self, batch):
        return table_of(self.take(rows_of(batch)))

    def take(self, rows: list[Row]) -> list[Row]:
        """The stage over a batch's rows: its own kind worked on (the rows it makes are `HeldRow`s),
        every other row passed through."""
        from pagerouter.common.memory import release_free_memory

        mine = [i for i, r in enumerate(rows) if r.kind == self.kind]
        if not mine:
            return rows
        items = [rows[i].obj for i in mine]
        with _Meter() as m:
            try:
                self.engine  # noqa: B018 - loads it: an engine that cannot load fails these pages, as in convert
            except Exception as exc:  # noqa: BLE001 - its reason goes to each page
                done = [self._engine_failed(w, exc) for w in items]
            else:
                done = self.work(items)
        cpu, gpu = m.cpu / len(items), m.wall * self.gpus / len(items)
        for w, (_, out) in zip(items, done):
            w.cpu_s, w.gpu_s = w.cpu_s + cpu, w.gpu_s + gpu
            if isinstance(out, PagesOut):  # a finished page: built inside `work` from w's figures, before
                out.cpu_s, out.gpu_s = out.cpu_s + cpu, out.gpu_s + gpu  # this stage's share was known
        release_free_memory()  # as the deployments do: keeps the actor's RSS flat
        passed = [r for r in rows if r.kind != self.kind]
        return passed + [HeldRow(rows[i].doc, kind, obj) for i, (kind, obj) in zip(mine, done)]

    def work(self, items: list[OcrWork]) -> list[tuple[str, object]]:
        raise NotImplementedError

    def _engine_failed(self, w: OcrWork, exc: Exception) -> tuple[str, PagesOut]:
        """The page as `convert_pages` leaves an OCR page whose flow raised: what it already has
        (a mixed page's text layer, its flags), status failed, the one-line error."""
        from pagerouter.flow.page_status import failed_page
        from pagerouter.render.output import clean_model

        page = w.outcome.page
        page.status = "failed"
        page.error = failed_page(w.name, page.number, "OCR", exc).error
        return self._done(w, clean_model(page))

    async def _page(self, w: OcrWork, calls, flow):
        """The page through `pipeline.convert_pages`, as the Converter runs it, with `flow` the
        part of the OCR flow this stage still runs (the parts before it ran upstream)."""
        from pagerouter.flow.pipeline import convert_pages

        async def one():
            yield w.outcome

        gen = convert_pages(one(), w.name, self.cfg, calls, concurrency=1,
                            languages=tuple(self.run.languages or ()), images=self.run.images, flow=flow)
        async with aclosing(gen) as pages:
            async for page in pages:
                if "layout" in page.timings:  # the replayed calls took no time: the pools' measured share
                    page.timings["layout"] = w.layout_s
                if "read" in page.timings:
                    page.timings["read"] = w.read_s
                return page
        raise RuntimeError(f"{w.name}: page {w.outcome.page.number}: no page came back")

    def _done(self, w: OcrWork, page) -> tuple[str, PagesOut]:
        return "pages", PagesOut(w.header, [(page, w.engines)], w.cpu_s, w.gpu_s)


class LayoutStage(_PoolStage):
    role, kind = "layout", "ocr"

    def work(self, items):
        from pagerouter.flow.engines import batch_call_isolated

        t0 = time.perf_counter()
        results = batch_call_isolated(self.engine.detect_batch, [w.outcome.task for w in items])
        each = (time.perf_counter() - t0) / len(items)
        for w, r in zip(items, results):
            w.layout, w.layout_s = _storable(r), each
            w.engines.append(self.label)
        return [("ocr", w) for w in items]


class ReaderStage(_PoolStage):
    role, kind = "small_reader", "ocr"

    def work(self, items):
        from pagerouter.flow.engines import batch_call_isolated

        # One page per engine call, as the Converter reads (`EngineSet.calls`): a recognition run
        # shared by several pages pads and orders their text lines together, which changes what
        # a line reads as (one newspaper page of the real corpus read different words), and the
        # batch must read exactly what `convert` reads.
        for w in items:
            if isinstance(w.layout, BaseException):
                continue
            t0 = time.perf_counter()
            (r,) = batch_call_isolated(self.engine.read_batch, [w.outcome.task], [w.layout])
            w.reading, w.read_s = _storable(r), time.perf_counter() - t0
            w.engines.append(self.label)
        return run_async(self._settle_all(items))

    async def _settle_all(self, items):
        return list(await asyncio.gather(*(self._settle(w) for w in items)))

    async def _settle(self, w: OcrWork):
        """The first reading's checks (`pipeline.first_reading`, over the layout and reading the
        pools made); a page the pipeline's rule escalates (`pipeline.escalates`) goes on to the
        escalation pool with that checked reading, any other page is finished here."""
        from pagerouter.common.stages import OcrCalls, Reading
        from pagerouter.flow.pipeline import escalates, first_reading

        calls = OcrCalls(layout=_replay(w.layout), read=_replay(w.reading))
        try:
            first = await first_reading(w.outcome.task, calls, self.cfg)
        except Exception as exc:  # noqa: BLE001 - the page fails in convert_pages, as ocr_flow's would
            first = exc
        if isinstance(first, Reading) and escalates(first, self.cfg):
            w.reading = first
            return "escalate", w
        page = await self._page(w, calls, flow=_replay_flow(first))
        return self._done(w, page)


class EscalationStage(_PoolStage):
    role, kind = "escalation", "escalate"

    def work(self, items):
        return run_async(self._all(items))

    async def _all(self, items):
        return list(await asyncio.gather(*(self._one(w) for w in items)))

    async def _one(self, w: OcrWork):
        """The escalation of a page the reader pool sent on, and the page (`convert_pages` once,
        running the part of `ocr_flow` after the first reading: `pipeline.escalated_reading`)."""
        from pagerouter.common.stages import OcrCalls
        from pagerouter.flow.pipeline import escalated_reading

        called: list[bool] = []

        async def escalate(task, first):
            called.append(True)
            return await asyncio.to_thread(self.engine.escalate, task, first)

        async def flow(task, calls, cfg):
            return await escalated_reading(task, w.reading, calls, cfg)

        calls = OcrCalls(layout=_replay(w.layout), read=_replay(w.reading), escalate=escalate,
                         escalation_timeout_s=self.run.escalation_s, escalation_wait=self.run.escalation_why)
        page = await self._page(w, calls, flow=flow)
        if called:
            w.engines.append(self.label)
        return self._done(w, page)


class CpuPool:
    """Model stages that ask no GPU, run one after another in one actor (`batch.cpu_pool`): each
    stage works on its own rows of the batch exactly as in a pool of its own (same calls, same
    per-page results), over one `EngineSet`. Three pools of one stage each cost two more actor
    processes, each loading its own model (and each one Ray Data added while pages queued, a
    process and a model load more), and carried every page render from actor to actor twice."""

    def __init__(self, run: RunSpec, stages: tuple[type[_PoolStage], ...], cpus: float | None = None,
                 actors: int = 1):
        self.engines = _engines(run, cpus, actors)
        self.stages = [stage(run, self.engines) for stage in stages]

    def __call__(self, batch):
        rows = rows_of(batch)
        for stage in self.stages:  # a page's object goes from stage to stage in hand, pickled once at the end
            rows = stage.take(rows)
        return table_of(rows)

    def close(self) -> None:
        self.engines.close()

    def __del__(self) -> None:  # as `_PoolStage.__del__`: when Ray Data drops the actor's UDF
        if getattr(self, "engines", None) is not None:
            self.close()
