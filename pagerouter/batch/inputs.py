"""Local INPUT arguments of `pagerouter batch` -> the planned items, each with its mirrored output path
(fsio.plan_items plans filesystem URIs the same way and is what the command calls).

An argument is a file, a folder (searched recursively for supported suffixes), a glob
(`'scans/**/*.pdf'`, expanded here so it works unquoted or quoted) or `@LIST` (a text file with
one path, folder or glob per line; blank lines and `#` comments are skipped). A path that does
not exist, or a glob that matches nothing, is kept as an item whose conversion fails with one
line naming it: a batch reports bad inputs, it does not refuse to start.

Output paths mirror each input's path relative to the common folder of all inputs (folder
arguments count as that folder), so `a/x.pdf` and `b/x.pdf` become `a/x.*` and `b/x.*` and two
distinct inputs never collide on their relative path; the same arguments always give the same
layout, which is what lets a re-run find its earlier outputs.
"""

from __future__ import annotations

import glob
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

SUFFIXES = {".pdf", ".png", ".jpg", ".jpeg", ".tif", ".tiff", ".bmp", ".gif", ".webp"}
_GLOB_CHARS = set("*?[")


class BatchUsageError(Exception):
    """A problem with the arguments as a whole (exit 2), e.g. two inputs writing one output."""


@dataclass(frozen=True)
class BatchItem:
    """One input of a batch, in every mode. A local file is read by its path, a URI's file
    through its pyarrow filesystem (fsio.py); either may not exist, and the item then fails."""

    uri: str            # the journal key: a local file's absolute path (so every mode's journal agrees), else the URI
    scheme: str         # "" for a local path, else the filesystem's ("s3", "gs", "file", ...)
    path: str           # the path within its filesystem (absolute for a local file)
    rel: PurePosixPath  # output path relative to OUTDIR, without the .md/.json suffix
    shown: str          # as the user wrote it (or folder/relative), for messages and Document.source


def _expand(arg: str, cwd: Path) -> tuple[list[tuple[Path, str]], list[Path]]:
    """([(absolute path, shown)], [folders given]) of one argument; missing ones stay in the list."""
    p = Path(arg).expanduser()
    absolute = p if p.is_absolute() else cwd / p
    if absolute.is_dir():
        files = sorted(f for f in absolute.rglob("*") if f.is_file() and f.suffix.lower() in SUFFIXES)
        return [(f, str(p / f.relative_to(absolute))) for f in files], [absolute]
    if not absolute.exists() and _GLOB_CHARS & set(arg):
        hits = sorted(glob.glob(str(absolute), recursive=True))
        files = [Path(h) for h in hits if Path(h).is_file()]
        if files:
            return [(f, os.path.relpath(f, cwd) if not p.is_absolute() else str(f)) for f in files], []
    return [(absolute, arg)], []


def _list_file(arg: str, cwd: Path) -> list[str]:
    path = Path(arg[1:]).expanduser()
    try:
        lines = (path if path.is_absolute() else cwd / path).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise BatchUsageError(f"{path}: cannot read the list file: {exc.strerror or exc}") from None
    return [s.strip() for s in lines if s.strip() and not s.strip().startswith("#")]


def plan(args: list[str], cwd: Path | None = None) -> list[BatchItem]:
    """Every local input of `args`, deduplicated by absolute path, in a stable order (sorted by output path)."""
    cwd = cwd or Path.cwd()
    found: dict[Path, str] = {}
    anchors: list[Path] = []
    for arg in args:
        for one in _list_file(arg, cwd) if arg.startswith("@") else [arg]:
            files, folders = _expand(one, cwd)
            anchors += folders
            for f, shown in files:
                found.setdefault(Path(os.path.normpath(f)), shown)
    if not found:
        return []
    base = Path(os.path.commonpath([str(f.parent) for f in found] + [str(a) for a in anchors]))
    items, seen = [], {}
    for f, shown in found.items():
        rel = PurePosixPath(f.relative_to(base).with_suffix("").as_posix())
        if rel in seen:  # x.pdf beside x.png: both would write x.md
            raise BatchUsageError(f"{seen[rel]} and {shown} would both write {rel}.md/.json; convert them separately")
        seen[rel] = shown
        items.append(BatchItem(str(f), "", str(f), rel, shown))
    return sorted(items, key=lambda i: str(i.rel))


def parse_shard(text: str | None) -> tuple[int, int]:
    """`I/N` -> (I, N) with 0 <= I < N; None -> (0, 1)."""
    if text is None:
        return 0, 1
    try:
        i, n = (int(v) for v in text.split("/"))
    except ValueError:
        raise BatchUsageError(f"--shard wants I/N (e.g. 0/4), not {text!r}") from None
    if not (n >= 1 and 0 <= i < n):
        raise BatchUsageError(f"--shard {text}: I must be in 0..N-1 and N at least 1")
    return i, n


def in_shard(item: BatchItem, shard: tuple[int, int]) -> bool:
    """Whether the item belongs to shard I of N. By a hash of its output path, not its position,
    so every machine agrees even when they list the inputs in different orders, and adding files
    does not move the others to another shard."""
    i, n = shard
    digest = hashlib.sha256(str(item.rel).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % n == i
