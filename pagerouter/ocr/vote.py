"""Token-level majority vote over several readings of the same text (ROVER-style).

Method (progressive alignment to a pivot):
1. Tokenise each witness (`text_stats.tokens`: whitespace words; one token per character in
   Han/Kana/Thai). The pivot is the first witness, in the given (fixed, configured) engine
   order, that has any token; line breaks are taken from the pivot only.
2. Align every other witness to the pivot: difflib's matching blocks anchor the identical
   runs; inside each non-identical stretch a small Needleman-Wunsch alignment pairs tokens by
   character similarity (so "Tbe" pairs with "The", a split "to day" pairs one half and
   inserts the other). Each pivot token gets one candidate per witness (a token or "" when
   that witness deleted it); tokens a witness has between two pivot tokens form an
   insertion candidate there.
3. Majority per slot. Pivot slots: the candidate with most votes wins; a tie goes to the
   candidate of the earliest witness in engine order. Insertion slots: text is inserted only
   if a strict majority of witnesses has something there; which text is then voted the same
   way (recursively) among those witnesses.

With two witnesses every disagreement is a 1-1 tie, so the result is the first witness's
text; the per-token agreement then marks where the second witness disagreed.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from functools import lru_cache

from .text_stats import join_tokens, tokens

MAX_NW_CELLS = 40_000
"""Bigger non-matching stretches are paired by position instead (garbage vs text: no point)."""


@dataclass
class VotedToken:
    text: str
    votes: int  # witnesses that produced exactly this token here
    total: int  # witnesses that voted on this slot
    sources: list[str] = field(default_factory=list)  # engines that agreed, in engine order


@dataclass
class VoteResult:
    text: str
    tokens: list[VotedToken]
    witnesses: list[str]  # engines that voted, in engine order
    pivot: str | None = None  # the engine whose token sequence (and line breaks) framed the vote

    @property
    def agreement(self) -> float:
        """Character-weighted mean of votes/total over output tokens (1.0 = all agreed)."""
        w = [(len(t.text), t.votes / max(1, t.total)) for t in self.tokens if t.text != "\n"]
        n = sum(a for a, _ in w)
        return sum(a * b for a, b in w) / n if n else 1.0

    @property
    def disagreements(self) -> int:
        return sum(1 for t in self.tokens if t.text != "\n" and t.votes < t.total)


def vote(readings: list[tuple[str, str]]) -> VoteResult:
    """Majority text of `[(engine, text), ...]` given in fixed engine order (see module doc)."""
    names = [n for n, _ in readings]
    toks = [tokens(t or "", keep_newlines=True) for _, t in readings]
    if not readings:
        return VoteResult("", [], [], None)
    pivot_i = next((i for i, t in enumerate(toks) if any(x != "\n" for x in t)), None)
    if pivot_i is None:
        return VoteResult("", [], names, None)
    out = _vote_tokens(names, toks, pivot_i)
    return VoteResult(join_tokens([t.text for t in out]), out, names, names[pivot_i])


def _vote_tokens(names: list[str], toks: list[list[str]], pivot_i: int) -> list[VotedToken]:
    pivot_full = toks[pivot_i]
    pivot = [t for t in pivot_full if t != "\n"]
    n = len(pivot)
    k = len(names)
    # sub[i][w]: witness w's candidate for pivot token i; ins[i][w]: tokens before pivot token i.
    sub: list[list[str]] = [[""] * k for _ in range(n)]
    ins: list[list[list[str]]] = [[[] for _ in range(k)] for _ in range(n + 1)]
    for w in range(k):
        if w == pivot_i:
            for i in range(n):
                sub[i][w] = pivot[i]
            continue
        other = [t for t in toks[w] if t != "\n"]
        pairs = _align(pivot, other)
        for i, j in pairs:
            if i is not None and j is not None:
                sub[i][w] = other[j]
        # Insertions attach before the next pivot token: walk backwards carrying that index.
        nxt = n
        for i, j in reversed(pairs):
            if i is not None:
                nxt = i
            elif j is not None:
                ins[nxt][w].insert(0, other[j])

    out: list[VotedToken] = []
    pi = 0
    for t in pivot_full:
        if t == "\n":
            out.append(VotedToken("\n", k, k, list(names)))
            continue
        out.extend(_vote_insertion(names, ins[pi]))
        out.extend(_vote_slot(names, sub[pi]))
        pi += 1
    out.extend(_vote_insertion(names, ins[n]))
    return out


def _vote_slot(names: list[str], cands: list[str]) -> list[VotedToken]:
    counts = Counter(cands)
    best = max(counts.values())
    # Tie -> the candidate of the earliest witness in engine order.
    winner = next(c for c in cands if counts[c] == best)
    if not winner:
        return []
    return [VotedToken(winner, best, len(cands), [names[i] for i, c in enumerate(cands) if c == winner])]


def _vote_insertion(names: list[str], seqs: list[list[str]]) -> list[VotedToken]:
    having = [i for i, s in enumerate(seqs) if s]
    if len(having) * 2 <= len(seqs):  # no strict majority for inserting anything
        return []
    sub_names = [names[i] for i in having]
    sub_toks = [seqs[i] for i in having]
    inner = _vote_tokens(sub_names, sub_toks, 0)
    # report votes out of all witnesses, not only the inserting ones
    return [VotedToken(t.text, t.votes, len(seqs), t.sources) for t in inner]


@lru_cache(maxsize=65536)
def _similarity(a: str, b: str) -> float:
    if a == b:
        return 1.0
    return SequenceMatcher(None, a.lower(), b.lower(), autojunk=False).ratio()


def _align(a: list[str], b: list[str]) -> list[tuple[int | None, int | None]]:
    """Monotone alignment of token lists: (i, j) pairs, (i, None) deletion, (None, j) insertion."""
    pairs: list[tuple[int | None, int | None]] = []
    sm = SequenceMatcher(None, a, b, autojunk=False)
    for op, i1, i2, j1, j2 in sm.get_opcodes():
        if op == "equal":
            pairs.extend(zip(range(i1, i2), range(j1, j2)))
        elif op == "delete":
            pairs.extend((i, None) for i in range(i1, i2))
        elif op == "insert":
            pairs.extend((None, j) for j in range(j1, j2))
        else:
            pairs.extend(_nw(a, b, i1, i2, j1, j2))
    return pairs


def _nw(a, b, i1, i2, j1, j2, gap: float = 0.6) -> list[tuple[int | None, int | None]]:
    """Needleman-Wunsch on a[i1:i2] vs b[j1:j2], substitution cost 1 - character similarity."""
    n, m = i2 - i1, j2 - j1
    if n * m > MAX_NW_CELLS:  # pair by relative position
        out: list[tuple[int | None, int | None]] = []
        for jj in range(m):
            out.append((None, j1 + jj))
        return [(i1 + ii, None) for ii in range(n)] + out if n else out
    cost = [[0.0] * (m + 1) for _ in range(n + 1)]
    for i in range(1, n + 1):
        cost[i][0] = i * gap
    for j in range(1, m + 1):
        cost[0][j] = j * gap
    for i in range(1, n + 1):
        ai = a[i1 + i - 1]
        row, prev = cost[i], cost[i - 1]
        for j in range(1, m + 1):
            row[j] = min(prev[j - 1] + 1.0 - _similarity(ai, b[j1 + j - 1]), prev[j] + gap, row[j - 1] + gap)
    i, j = n, m
    rev: list[tuple[int | None, int | None]] = []
    while i > 0 or j > 0:
        if i > 0 and j > 0 and abs(cost[i][j] - (cost[i - 1][j - 1] + 1.0 - _similarity(a[i1 + i - 1], b[j1 + j - 1]))) < 1e-9:
            rev.append((i1 + i - 1, j1 + j - 1))
            i, j = i - 1, j - 1
        elif i > 0 and abs(cost[i][j] - (cost[i - 1][j] + gap)) < 1e-9:
            rev.append((i1 + i - 1, None))
            i -= 1
        else:
            rev.append((None, j1 + j - 1))
            j -= 1
    return rev[::-1]
