"""The batch journal and atomic output writes.

The journal is append-only JSON lines in OUTDIR (`pagerouter-batch.journal.jsonl`, or
`pagerouter-batch.shard-I-of-N.journal.jsonl` per shard so machines sharing OUTDIR never write
one file). Each line is one finished file: input path, sha256 of its bytes, the hash of the
effective config + options, output paths, status (done/failed + error), pages per status and
route, seconds. Every record is written with one `write` and fsynced before the file counts.

A kill -9 can leave a torn last line: reading skips a line that does not parse, and opening for
append first ends such a line, so the next record starts on a line of its own.
"""

from __future__ import annotations

import fcntl
import json
import os
import threading
from pathlib import Path

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
