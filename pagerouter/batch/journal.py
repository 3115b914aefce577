"""The batch journal and atomic output writes.

The journal is append-only JSON lines in OUTDIR (`pagerouter-batch.journal.jsonl`, or
`pagerouter-batch.shard-I-of-N.journal.jsonl` per shard so machines sharing OUTDIR never write
one file). Each line is one finished file: input path, sha256 of its bytes, the hash of the
effective config + options, output paths, status (done/failed + error), pages per status and
route, seconds. Every record is written with one `write` and fsynced before the file counts.

A kill -9 can leave a torn last line: reading skips a line that does not parse, and opening for
append first ends such a line, so the next record starts on a line of its own.

What a rerun skips is one rule for every mode (`skip_statuses`): an input whose latest record
under the same config hash is `done` with both outputs in place, `failed` (unless
--retry-failed; a file still unreadable is matched by its record without a sha256), or
`skipped` by the document filter. Anything else (no record, a `job` record, a done one whose
outputs are gone, a changed file or config) is converted again.
"""

from __future__ import annotations

import fcntl
import json
import os
import threading
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from .inputs import BatchItem

JOURNAL_PREFIX = "pagerouter-batch"
TMP_SUFFIX = ".pagerouter-tmp"


def journal_name(shard: tuple[int, int]) -> str:
    i, n = shard
    return f"{JOURNAL_PREFIX}.journal.jsonl" if n == 1 else f"{JOURNAL_PREFIX}.shard-{i}-of-{n}.journal.jsonl"


def record_key(rec: dict) -> tuple:
    """What a record is about: the same bytes at the same path under the same config + options."""
    return rec.get("input"), rec.get("sha256"), rec.get("config_hash")


def read_records(outdir: Path) -> list[dict]:
    """Every parseable record of every journal in OUTDIR (all shards), in file then line order."""
    out: list[dict] = []
    for path in sorted(outdir.glob(f"{JOURNAL_PREFIX}*.journal.jsonl")):
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                rec = json.loads(line)
            except ValueError:
                continue  # a line torn by a kill: its file has no record and is converted again
            if isinstance(rec, dict) and rec.get("input"):
                out.append(rec)
    return out


def latest(records: list[dict]) -> dict[tuple, dict]:
    """The last record per key (a retried file's newer record wins over its failed one)."""
    return {record_key(r): r for r in records}


def skip_statuses(items: list[BatchItem], previous: dict, config_hash: str, output, retry_failed: bool) -> list[dict]:
    """Per item {sha256, or None for a file that could not be read: status} of the records in
    `previous` (`latest` of the journal) that let a rerun skip it when its bytes hash to that
    sha256 (see the module's docstring); `output` is the fsio.Output the outputs are looked for in."""
    by_input: dict[str, dict] = {}
    for (inp, sha, h), rec in previous.items():
        if h == config_hash:
            by_input.setdefault(inp, {})[sha] = rec
    out = []
    for item in items:
        keep = {}
        for sha, rec in by_input.get(item.uri, {}).items():
            st = rec.get("status")
            if st == "done" and all(output.exists(rel) for rel in output.outputs(item)):
                keep[sha] = st
            elif (st == "failed" and not retry_failed) or st == "skipped":
                keep[sha] = st
        out.append(keep)
    return out


def journal_record(item: BatchItem, sha: str | None, config_hash: str, mode: str, seconds: float, **fields) -> dict:
    """One journal line; `fields` add status, error, outputs, pages, ..."""
    return {"v": 1, "input": item.uri, "shown": item.shown, "rel": str(item.rel), "sha256": sha,
            "config_hash": config_hash, "mode": mode, "seconds": round(seconds, 4),
            "finished_at": datetime.now(timezone.utc).isoformat(timespec="seconds"), **fields}


def document_fields(doc) -> dict:
    """The done record's figures of a converted document: pages, pages per status, routes."""
    status = {"ok": 0, "flagged": 0, "failed": 0}
    for p in doc.pages:
        status[p.status] = status.get(p.status, 0) + 1
    return {"pages": len(doc.pages), "page_status": status, "routes": doc.route_summary()}


@dataclass
class Outcome:
    """One input's result in this run, for the progress line and the summary."""

    item: BatchItem
    record: dict
    converted: bool  # False: skipped, its record is from an earlier run


class JournalBusy(Exception):
    """Another live run of the same shard holds the journal."""


class Journal:
    """Appends records to this run's journal file; thread-safe (the workers share it). Holds an
    exclusive lock on the file while open: two runs of one shard in one OUTDIR would convert the
    same files twice and clean each other's temp files. The kernel drops the lock when the holder
    dies, kill -9 included, so a crashed run never blocks the next one."""

    def __init__(self, outdir: Path, shard: tuple[int, int]):
        self.path = outdir / journal_name(shard)
        self._lock = threading.Lock()
        self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(self._fd)
            raise JournalBusy(f"{self.path}: another `pagerouter batch` run of this shard is writing it") from None
        size = os.fstat(self._fd).st_size
        if size:
            with open(self.path, "rb") as f:
                f.seek(size - 1)
                if f.read(1) != b"\n":
                    os.write(self._fd, b"\n")  # end a line torn by a kill
        _fsync_dir(outdir)  # the journal's own directory entry survives a crash too

    def append(self, rec: dict) -> None:
        line = (json.dumps(rec, ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8")
        with self._lock:
            os.write(self._fd, line)  # one write: O_APPEND keeps concurrent lines whole
            os.fsync(self._fd)

    def close(self) -> None:
        os.close(self._fd)


def _fsync_dir(d: Path) -> None:
    try:
        fd = os.open(d, os.O_RDONLY)
    except OSError:
        return  # not possible on every platform; the rename is still atomic
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def tmp_tag(shard: tuple[int, int]) -> str:
    """Temp-file tag of one shard: a run cleans only its own shard's strays, never the live
    temp files of another machine writing into the same OUTDIR."""
    return f".s{shard[0]}of{shard[1]}{TMP_SUFFIX}"


def write_atomically(targets: list[tuple[Path, str | bytes]], tag: str) -> None:
    """Write each (path, text or bytes) to a temp file beside it, fsync, then rename all into
    place and fsync the directories; readers see the old file or the whole new one, never a part."""
    temps = []
    try:
        for target, text in targets:
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.with_name(target.name + tag)
            with open(tmp, "wb") if isinstance(text, bytes) else open(tmp, "w", encoding="utf-8") as f:
                f.write(text)
                f.flush()
                os.fsync(f.fileno())
            temps.append((tmp, target))
        for tmp, target in temps:
            os.replace(tmp, target)
        for d in {t.parent for _, t in temps}:
            _fsync_dir(d)
    finally:
        for tmp, _ in temps:
            if tmp.exists():
                tmp.unlink(missing_ok=True)


def clean_strays(outdir: Path, tag: str) -> int:
    """Remove temp files a killed run of this shard left; returns how many."""
    n = 0
    for p in outdir.rglob(f"*{tag}"):
        try:
            p.unlink()
            n += 1
        except OSError:
            pass
    return n
