"""Measures for `pagerouter bench`: character error rate, percentiles, CPU seconds, cost.

CER normalisation (applied to both the reference and the system's text before comparing):
Unicode NFKC; Markdown markup removed (`#` heading marks at line starts, `**`/`__` emphasis,
`|` table bars, `<!-- -->` comments); every run of whitespace (spaces, line breaks, paragraph
breaks) becomes one space; trimmed. Case, punctuation and digits are kept: they are errors a
reader can make. CER = Levenshtein distance (insert, delete, substitute, each 1) / reference
length; a corpus's CER sums distances over its pages and divides by the summed reference length.
"""

from __future__ import annotations

import math
import os
import re
import resource
import unicodedata
from pathlib import Path

import numpy as np

_MD = re.compile(r"(?m)^\s{0,3}#{1,6}\s+|\*\*|__|\||<!--.*?-->", re.S)
_WS = re.compile(r"\s+")


def normalise(text: str) -> str:
    text = unicodedata.normalize("NFKC", text or "")
    text = _MD.sub(" ", text)
    return _WS.sub(" ", text).strip()


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance, one numpy row at a time: within a row, the insertion chain
    d[j] = min(d[j], d[j-1] + 1) is a running minimum of d[k] - k, plus j."""
    if len(a) < len(b):
        a, b = b, a
    if not b:
        return len(a)
    bb = np.frombuffer(b.encode("utf-32-le"), dtype=np.uint32)
    idx = np.arange(len(b) + 1, dtype=np.int64)
    prev = idx.copy()
    for i, code in enumerate(np.frombuffer(a.encode("utf-32-le"), dtype=np.uint32).tolist()):
        cand = np.empty_like(prev)
        cand[0] = i + 1
        # substitution (or match) from the diagonal, deletion from above
        cand[1:] = np.minimum(prev[:-1] + (bb != code), prev[1:] + 1)
        prev = np.minimum.accumulate(cand - idx) + idx
    return int(prev[-1])


def cer_counts(reference: str, hypothesis: str) -> tuple[int, int]:
    """(edits, reference length) after normalisation."""
    ref, hyp = normalise(reference), normalise(hypothesis)
    return edit_distance(ref, hyp), len(ref)


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0..100), linear between closest ranks; NaN for no values."""
    if not values:
        return math.nan
    return float(np.percentile(np.asarray(values, dtype=float), q))


def cost_per_million(cpu_seconds: float, gpu_seconds: float, pages: int, prices) -> float:
    """USD per million pages: (CPU s x core-hour price + GPU s x GPU-hour price) / 3600 / pages x 1e6."""
    if pages <= 0:
        return math.nan
    usd = cpu_seconds * prices.cpu_core_hour_usd / 3600 + gpu_seconds * prices.gpu_hour_usd / 3600
    return usd / pages * 1e6


# ---------------------------------------------------------------------- CPU time
_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _stat_fields(raw: str) -> list[str]:
    """The fields of a /proc stat line after the command name, which may hold spaces and
    parentheses: they start after the last ')'."""
    return raw[raw.rfind(")") + 2 :].split()


def _stat_cpu(raw: str) -> float:
    """utime + stime + cutime + cstime of a /proc stat line, in seconds."""
    return sum(int(x) for x in _stat_fields(raw)[11:15]) / _TICK


def _proc_stats() -> dict[int, tuple[int, float]]:
    """{pid: (ppid, user+system+waited-children CPU seconds)} of every process (Linux /proc)."""
    out: dict[int, tuple[int, float]] = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            raw = (d / "stat").read_text()
        except OSError:
            continue
        out[int(d.name)] = (int(_stat_fields(raw)[1]), _stat_cpu(raw))
    return out


def _children(pid: int) -> list[int] | None:
    """`pid`'s child processes, from each of its threads' /proc children file (a child belongs to
    the thread that forked it); None where the kernel keeps no such files."""
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:  # gone meanwhile
        return []
    kids: list[int] = []
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                kids += [int(x) for x in f.read().split()]
        except FileNotFoundError:
            if not os.path.exists(f"/proc/{pid}/task/{tid}"):
                continue  # the thread ended meanwhile
            return None  # no CONFIG_PROC_CHILDREN
        except OSError:
            continue
    return kids


def _own_cpu(pid: int) -> float:
    """User + system + waited-children CPU seconds of one process (0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            raw = f.read()
    except OSError:
        return 0.0
    return _stat_cpu(raw)


def descendants_cpu() -> float:
    """CPU seconds of this process's live descendants (each with its own waited-for children).
    The isolation workers are grandchildren (forked by a fork server), so RUSAGE_CHILDREN alone
    would miss them while they live. The tree is walked down from this process (its threads'
    children files): a scan of every process's stat cost 4-6 ms a reading on a Ray node, and a
    batch reads it twice per stage per block of pages."""
    if not Path("/proc/self/stat").exists():
        return 0.0
    todo = _children(os.getpid())
    if todo is None:
        return _descendants_cpu_by_scan()
    total = 0.0
    while todo:
        pid = todo.pop()
        total += _own_cpu(pid)
        todo += _children(pid) or []
    return total


def _descendants_cpu_by_scan() -> float:
    """`descendants_cpu` from a scan of every process (a kernel without children files)."""
    stats = _proc_stats()
    kids: dict[int, list[int]] = {}
    for pid, (ppid, _) in stats.items():
        kids.setdefault(ppid, []).append(pid)
    total, todo = 0.0, list(kids.get(os.getpid(), []))
    while todo:
        pid = todo.pop()
        total += stats[pid][1]
        todo += kids.get(pid, [])
    return total


def process_tree_cpu() -> float:
    """CPU seconds (user + system) used so far by this process, its reaped children and its
    live descendants. A difference of two readings is what ran in between, wherever it ran:
    a descendant that exits and is reaped moves its time from the live sum into its parent's
    waited-children time (or RUSAGE_CHILDREN), so it is neither lost nor counted twice."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    ch = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + ch.ru_utime + ch.ru_stime + descendants_cpu()
