"""Mutations of PDF bytes, for the intake fuzz test (Hypothesis draws) and the `--ray` fuzz
benchmark (a seeded `random.Random`): one home for what "a broken file" means here.

`mutate(data, ops, pick)` applies each op in turn; `pick` draws the numbers an op needs, so the
same mutations serve a Hypothesis strategy (`HypothesisPick`) and a plain seeded run (`RandomPick`).

    flip      1-24 random bit flips
    cut       truncation at a random offset
    dup_xref  the last xref section and trailer again, maybe with a wrong startxref
    objstm    a random object stream (or plain stream, or a 9999x9999 image header) before the xref
    stream    random bytes in place of one stream's data, same length (offsets hold)
    splice    a chunk of the file copied elsewhere
    xref      digits of the xref table's offsets overwritten (every lookup lands somewhere wrong)
    huge      a huge object: a 64-deep-to-20,000-deep nested array, a 200,000-entry dictionary,
              a stream whose /Length claims 2 GB, or 8 MB of junk in one stream
"""

from __future__ import annotations

import random
import re

OPS = ["flip", "cut", "dup_xref", "objstm", "stream", "splice"]
MORE_OPS = ["xref", "huge"]  # added for the --ray fuzz benchmark


class RandomPick:
    def __init__(self, rng: random.Random):
        self.rng = rng

    def integers(self, a: int, b: int) -> int:
        return self.rng.randint(a, b)

    def booleans(self) -> bool:
        return self.rng.random() < 0.5

    def sampled_from(self, seq):
        return self.rng.choice(list(seq))

    def binary(self, lo: int, hi: int) -> bytes:
        return self.rng.randbytes(self.rng.randint(lo, hi))


class HypothesisPick:
    def __init__(self, draw):
        from hypothesis import strategies as st

        self.draw, self.st = draw, st

    def integers(self, a: int, b: int) -> int:
        return self.draw(self.st.integers(a, b))

    def booleans(self) -> bool:
        return self.draw(self.st.booleans())

    def sampled_from(self, seq):
        return self.draw(self.st.sampled_from(seq))

    def binary(self, lo: int, hi: int) -> bytes:
        return self.draw(self.st.binary(min_size=lo, max_size=hi))


def _huge(data: bytearray, pick) -> bytearray:
    kind = pick.sampled_from(["nested", "dict", "length", "junk"])
    n = pick.integers(1, 60)
    if kind == "nested":
        depth = pick.sampled_from([64, 1000, 20_000])
        body = b"%d 0 obj\n%s%s\nendobj\n" % (n, b"[" * depth, b"]" * depth)
    elif kind == "dict":
        body = b"%d 0 obj\n<<%s>>\nendobj\n" % (n, b"".join(b"/K%d %d " % (i, i) for i in range(200_000)))
    elif kind == "length":
        body = b"%d 0 obj\n<</Length 2147483647/Filter/FlateDecode>>\nstream\nxx\nendstream\nendobj\n" % n
    else:
        junk = random.Random(n).randbytes(8 << 20)
        body = b"%d 0 obj\n<</Length %d>>\nstream\n%s\nendstream\nendobj\n" % (n, len(junk), junk)
    i = data.rfind(b"xref")
    i = i if i >= 0 else len(data)
    return data[:i] + body + data[i:]


def mutate(base: bytes, ops: list[str], pick) -> bytes:
    data = bytearray(base)
    for op in ops:
        n = len(data)
        if n == 0:
            break
        if op == "flip":
            for _ in range(pick.integers(1, 24)):
                data[pick.integers(0, n - 1)] ^= 1 << pick.integers(0, 7)
        elif op == "cut":
            data = data[: pick.integers(0, n)]
        elif op == "dup_xref":
            i = max(data.rfind(b"xref"), 0)
            tail = bytes(data[i:])
            if pick.booleans():
                tail = re.sub(rb"startxref\s+\d+", b"startxref\n%d" % pick.integers(0, 2 * n), tail)
            data = data[:i] + tail + tail
        elif op == "objstm":
            body = pick.binary(0, 400)
            kind = pick.sampled_from([b"/Type/ObjStm/N 3/First 12", b"/Filter/FlateDecode", b"/Type/XObject/Subtype/Image/Width 9999/Height 9999/BitsPerComponent 8/ColorSpace/DeviceRGB"])
            obj = b"%d 0 obj\n<<%s/Length %d>>\nstream\n%s\nendstream\nendobj\n" % (pick.integers(1, 60), kind, len(body), body)
            i = data.rfind(b"xref")
            i = i if i >= 0 else n
            data = data[:i] + obj + data[i:]
        elif op == "stream":
            starts = [m.end() for m in re.finditer(rb"stream\r?\n", data)]
            if starts:
                s = pick.sampled_from(starts)
                e = data.find(b"endstream", s)
                if e > s:
                    data[s:e] = pick.binary(e - s, e - s)
        elif op == "splice":
            a = pick.integers(0, n - 1)
            b = pick.integers(a, min(n, a + 512))
            at = pick.integers(0, n)
            data = data[:at] + data[a:b] + data[at:]
        elif op == "xref":
            offsets = [m.start() for m in re.finditer(rb"\d{10} \d{5} [nf]", data)]
            for at in (pick.sampled_from(offsets) for _ in range(min(len(offsets), pick.integers(1, 8)))):
                data[at:at + 10] = b"%010d" % pick.integers(0, 2 * n)
        elif op == "huge":
            data = _huge(data, pick)
    return bytes(data)
