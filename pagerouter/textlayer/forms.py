"""Form fields on the text-layer route: each value next to its label, on one line with it.

Filled forms lose their structure in a plain text layer: a widget's value is drawn by its
appearance stream *after* the page content, so MuPDF reports it as a line of its own far from
its label (or not at all: a form whose values live only in the fields' /V, the appearance left
to the viewer), and a checkbox comes out as a ZapfDingbats glyph ("3", "4", "l"). Printed forms
have the same problem without widgets: "Name:" and its value on one row with a wide gap are two
fragments the reading order may put paragraphs apart.

`FormReader.place` (pages with widgets only: `page.first_widget` is a few microseconds, pages
without widgets pay nothing more):

1. every visible widget with something to show (text, a choice, a box's state) is read with its
   field name, type and box;
2. the text its appearance stream drew inside the box is taken out of the page's lines (the
   value is written once, from the field: never twice, and the full value where the appearance
   clipped it); text in the box that is not the value (a printed hint) stays;
3. the value goes onto its label's line: the text just left of it on its row (or just right of a
   checkbox, as the box is usually drawn before its label), else the line just above the box;
   a field with no label nearby stays a line of its own at the box. A checkbox writes `[x]` or
   `[ ]`, a GFM task list's marks.

`pair_printed` joins a printed "Label:" fragment with the value fragment beside it on its row
(only rows made of such pairs, whose value does not run on to the next line as a text column
does). The lines made here are *form lines*: each becomes one `form_field` block whose JSON
lists the fields behind it (`Block.fields`); nothing else about the page changes.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Iterable

import pymupdf

from ..config.textlayer import TextLayerConfig
from ..common.geometry import BBox
from ..model import FormField
from .lines import Line

_CHECKBOX, _RADIO, _COMBO, _LIST, _TEXT = (
    pymupdf.PDF_WIDGET_TYPE_CHECKBOX, pymupdf.PDF_WIDGET_TYPE_RADIOBUTTON, pymupdf.PDF_WIDGET_TYPE_COMBOBOX,
    pymupdf.PDF_WIDGET_TYPE_LISTBOX, pymupdf.PDF_WIDGET_TYPE_TEXT,
)
_BOXES = (_CHECKBOX, _RADIO)
_PASSWORD = 1 << 13  # text field flag: the viewer shows bullets, never the value
_HIDDEN_DISPLAY = (1, 3)  # Widget.field_display: hidden, no view
_BOX_GLYPH = 3  # a box's appearance draws one glyph (ZapfDingbats "4" ✔, "l" ●, "8" ✗ ...)


@dataclass
class _Value:
    """One widget's value, placed in the reading frame."""

    field: FormField
    text: str  # as written in the Markdown
    box: BBox  # the widget in the frame
    at: BBox  # where the value's text sits (its appearance text, else the top of the box)
    size: float
    is_box: bool
    seq: tuple[int, int]


def _norm(s: str) -> str:
    return "".join(s.split()).casefold()


def _overlap_y(a: BBox, b: BBox) -> float:
    return min(a[3], b[3]) - max(a[1], b[1])


def _center_in(a: BBox, b: BBox, tol: float = 1.0) -> bool:
    cx, cy = (a[0] + a[2]) / 2, (a[1] + a[3]) / 2
    return b[0] - tol <= cx <= b[2] + tol and b[1] - tol <= cy <= b[3] + tol


class FormReader:
    """Form lines of one page: built by `place` / `pair_printed`, read back when blocks are made."""

    def __init__(self) -> None:
        # Keyed by id(): every line marked here is in the list `place`/`pair_printed` return,
        # which the reader keeps (its `lines`) until the page's blocks are made, so no id is
        # reused meanwhile; lines replaced by a join are unmarked at once.
        self.fields: dict[int, list[FormField]] = {}  # id(line) -> the widgets whose values it shows
        self.lines: set[int] = set()  # ids of form lines (printed pairs too)

    def is_form(self, ln: object) -> bool:
        return id(ln) in self.lines

    def _mark(self, ln: Line, fields: Iterable[FormField] = ()) -> Line:
        self.lines.add(id(ln))
        got = list(fields)
        if got:
            self.fields.setdefault(id(ln), []).extend(got)
        return ln

    def _join(self, a: Line, b: Line, sep: str = " ", form: bool = True) -> Line:
        """`a` then `b` as one form line (style of the label, `a` unless it is a box mark);
        `form=False`: a line of running text with a value filled in, which stays in its paragraph."""
        style = b if id(a) in self.fields and a.chars <= _BOX_GLYPH else a
        out = Line(min(a.x0, b.x0), min(a.y0, b.y0), max(a.x1, b.x1), max(a.y1, b.y1),
                   text=a.text.rstrip() + sep + b.text.lstrip(), size=style.size, bold=style.bold, mono=style.mono,
                   horizontal=True, chars=a.chars + b.chars, seq=min(a.seq, b.seq))
        fields = self.fields.pop(id(a), []) + self.fields.pop(id(b), [])
        self.lines.discard(id(a))
        self.lines.discard(id(b))
        if not form:
            if fields:
                self.fields[id(out)] = fields
            return out
        return self._mark(out, fields)

    # ------------------------------------------------------------------ widgets
    def place(self, page: pymupdf.Page, lines: list[Line], frame, cfg: TextLayerConfig) -> list[Line]:
        """`lines` (the page's merged line fragments, in the frame) with every widget's value on
        its label's line; the same list when the page has no widget to show."""
        if not cfg.read_form_fields or page.first_widget is None:
            return lines
        values = self._values(page, frame)
        if not values:
            return lines
        pool = list(lines)
        for v in values:
            pool = self._take_appearance(pool, v)
        em = _median([ln.size for ln in pool if ln.horizontal] or [v.size for v in values])
        for v in sorted(values, key=lambda v: (round(v.at[1]), v.at[0])):
            pool = self._attach(pool, v, em, cfg)
        return pool

    def _values(self, page: pymupdf.Page, frame) -> list[_Value]:
        out = []
        rot = frame.matrix
        for w in page.widgets():
            if w.field_display in _HIDDEN_DISPLAY or w.field_type not in (_CHECKBOX, _RADIO, _COMBO, _LIST, _TEXT):
                continue  # push buttons and signatures hold no value to read
            if w.field_type == _TEXT and w.field_flags & _PASSWORD:
                continue
            raw = w.field_value
            if w.field_type in _BOXES:
                on = raw not in (None, "", "Off", False)
                raw_s, text = (str(raw) if on else "Off"), ("[x]" if on else "[ ]")
            else:
                raw_s = ", ".join(map(str, raw)) if isinstance(raw, (list, tuple)) else str(raw or "")
                text = " ".join(raw_s.split())
                if not text:
                    continue  # an empty field shows nothing; its label stays as printed
            r = pymupdf.Rect(w.rect) * rot if rot is not None else pymupdf.Rect(w.rect)
            box = (r.x0, r.y0, r.x1, r.y1)
            field = FormField(name=w.field_name or "", type=w.field_type_string, value=raw_s,
                              bbox=frame.display_box(box))
            size = w.text_fontsize or min(12.0, max(6.0, (r.y1 - r.y0) * 0.7))
            out.append(_Value(field, text, box, box, size, w.field_type in _BOXES, (1 << 30, len(out))))
        return out

    def _take_appearance(self, pool: list[Line], v: _Value) -> list[Line]:
        """Drop what the widget's appearance drew inside its box when it is the value (or a box's
        mark); keep the union of its place. A line already holding the value together with its
        label (both in one fragment) becomes the form line itself."""
        inside = [ln for ln in pool if _center_in(ln.bbox, v.box)]
        want = _norm(v.text)
        if v.is_box:
            drawn = [ln for ln in inside if len(ln.text.strip()) <= _BOX_GLYPH]
            if not drawn:
                pool = self._unglue_mark(pool, v)
        else:
            opts = {_norm(o) for o in v.field.value.split(", ")}
            seen = _norm("".join(ln.text for ln in sorted(inside, key=lambda ln: (round(ln.y0), ln.x0))))
            if seen and (want.startswith(seen) or seen in want):
                drawn = inside  # the value (clipped or wrapped by the box: the field has it whole)
            else:
                drawn = [ln for ln in inside if _norm(ln.text) in opts]  # a list box draws its options
                if not drawn:
                    held = next((ln for ln in pool if _overlap_y(ln.bbox, v.box) > 0 and want
                                 and _norm(ln.text).endswith(want) and ln.x1 > v.box[0]), None)
                    if held is not None:  # label and drawn value merged into one fragment already
                        v.at = (-1, -1, -1, -1)
                        self._mark(held, [v.field])
                        return pool
        if drawn:
            v.at = (min(ln.x0 for ln in drawn), min(ln.y0 for ln in drawn),
                    max(ln.x1 for ln in drawn), max(ln.y1 for ln in drawn))
            v.size = _median([ln.size for ln in drawn])
            v.seq = min(ln.seq for ln in drawn)
            gone = {id(ln) for ln in drawn}
            return [ln for ln in pool if id(ln) not in gone]
        # no appearance text: the value sits at the top left of the box, one line tall
        x0, y0, x1, y1 = v.box
        h = min(y1 - y0, v.size * 1.2)
        top = y0 + max(0.0, (y1 - y0 - h) / 2) if (y1 - y0) < 2.2 * v.size else y0 + 1
        v.at = (x0 + 1, top, x1 - 1, top + h)
        return pool

    def _unglue_mark(self, pool: list[Line], v: _Value) -> list[Line]:
        """The box's glyph merged with the label beside it into one fragment ("3 I agree": a lone
        short fragment joins the text on its baseline as a list number would): the glyph goes,
        the label stays, and the box is placed from its own rect."""
        x0, y0, x1, y1 = v.box
        for i, ln in enumerate(pool):
            head, _, rest = ln.text.strip().partition(" ")
            if (x0 - 1 <= ln.x0 <= x1 and _overlap_y(ln.bbox, v.box) >= 0.5 * min(ln.height, y1 - y0)
                    and len(head) <= _BOX_GLYPH and rest and ln.x1 > x1):
                # the label's box starts where the box ends (its own width is in the fragment's)
                label = Line(x1, ln.y0, ln.x1, ln.y1, text=rest.lstrip(), size=ln.size, bold=ln.bold, mono=ln.mono,
                             horizontal=True, chars=max(0, ln.chars - len(head)), seq=ln.seq)
                v.at = (x0, ln.y0, x1, ln.y1)
                return [*pool[:i], label, *pool[i + 1:]]
        return pool

    def _attach(self, pool: list[Line], v: _Value, em: float, cfg: TextLayerConfig) -> list[Line]:
        if v.at[0] < 0:
            return pool  # shown with its label already (_take_appearance)
        x0, y0, x1, y1 = v.at
        val = self._mark(Line(x0, y0, x1, y1, text=v.text, size=v.size, bold=False, mono=False, horizontal=True,
                              chars=len(v.text), seq=v.seq), [v.field])
        row = [ln for ln in pool if ln.horizontal and _overlap_y(ln.bbox, v.at) >= 0.5 * min(ln.height, y1 - y0)]
        left = max((ln for ln in row if ln.x1 <= x0 + 1), key=lambda ln: ln.x1, default=None)
        right = min((ln for ln in row if ln.x0 >= v.box[2] - 1), key=lambda ln: ln.x0, default=None)
        gap_l = x0 - left.x1 if left is not None else float("inf")
        gap_r = right.x0 - v.box[2] if right is not None else float("inf")
        label: Line | None = None
        before = True  # the label comes before the value
        if v.is_box:
            near = cfg.form_box_label_max_gap_em * em
            # a box is drawn before its label ("[x] I agree") unless its label is clearly closer on the
            # left; a line that carries on a paragraph beside the box is not its label
            if (gap_r <= near and not self.is_form(right) and gap_r <= 1.5 * gap_l
                    and not _reads_on_from_above(right, pool, self.lines)):
                label, before = right, False
            elif gap_l <= near and not (self.is_form(left) and left.chars <= _BOX_GLYPH):
                label = left
        if label is None:  # a field, or a box set in a form's value column: its label is on the left or above
            # another field's value on the left (fields side by side, labels set above them):
            # the line above is the label, when there is one
            if left is not None and self.is_form(left):
                label = self._label_above(pool, v, cfg)
            if (label is None and left is not None and gap_l <= cfg.form_label_max_gap_em * em
                    and not (v.is_box and self.is_form(left))):  # a box is no part of the field on its left
                label = left
            if label is None:
                label = self._label_above(pool, v, cfg)
        if label is None:
            return [*pool, val]
        # a value filled into running text ("I, ___, declare") stays in its paragraph
        form = not _in_running_text(label, pool, self.lines)
        joined = self._join(label, val, form=form) if before else self._join(val, label, form=form)
        return [joined if ln is label else ln for ln in pool]

    def _label_above(self, pool: list[Line], v: _Value, cfg: TextLayerConfig) -> Line | None:
        """The line right above the box, over its left part: a label set above its field."""
        x0, y0, x1, _ = v.box
        best = None
        for ln in pool:
            if not ln.horizontal or self.is_form(ln) or ln.y1 > y0 + 1 or ln.x1 <= x0 or ln.x0 >= x1:
                continue
            if ln.x0 < x0 - 2 * ln.size or y0 - ln.y1 > cfg.form_label_above_gap * ln.height:
                continue
            if best is None or ln.y1 > best.y1:
                best = ln
        return best

    # ------------------------------------------------------------------ printed pairs
    def pair_printed(self, lines: list[Line], page_width: float, cfg: TextLayerConfig) -> list[Line]:
        """Printed "Label:" fragments joined with the value beside them on their row."""
        if not cfg.pair_printed_labels:
            return lines
        # (the colon test first, inline: it runs on every line of every page)
        labels = [ln for ln in lines if ln.text.rstrip().endswith((":", "：")) and ln.horizontal
                  and _is_label(ln, cfg) and not self.is_form(ln)]
        if not labels:
            return lines
        rows = _label_rows(labels, [ln for ln in lines if ln.horizontal])
        cands = [_row_pairs(row, page_width, cfg) for row in rows if not any(self.is_form(ln) for ln in row)]
        values = {id(v) for pairs in cands for _, v in pairs}
        label_ids = {id(ln) for ln in labels}
        joined: dict[int, Line] = {}
        gone: set[int] = set()
        for pairs in cands:
            if not pairs or any(_runs_on(lab, v, lines, label_ids, values) for lab, v in pairs):
                continue
            for lab, val in pairs:
                joined[id(lab)] = self._join(lab, val)
                gone.add(id(val))
        if not joined:
            return lines
        return [joined.get(id(ln), ln) for ln in lines if id(ln) not in gone]

    # ------------------------------------------------------------------ blocks
    def split(self, items: list, para_type: type) -> list:
        """Paragraphs with every form line its own paragraph (the run around it kept in order)."""
        if not self.lines:
            return items
        out = []
        for it in items:
            if not isinstance(it, para_type) or not any(id(ln) in self.lines for ln in it.lines):
                out.append(it)
                continue
            run: list[Line] = []
            for ln in it.lines:
                if id(ln) in self.lines:
                    if run:
                        out.append(para_type(run, it.key, marker=it.marker if run[0] is it.lines[0] else None))
                        run = []
                    out.append(para_type([ln], it.key))
                else:
                    run.append(ln)
            if run:
                out.append(para_type(run, it.key, marker=it.marker if run[0] is it.lines[0] else None))
        return out

    def set_roles(self, paras: list) -> None:
        """A paragraph that is one form line is a `form_field` (its fields in `extra`), whatever
        its type made of it (a bold label reads as a heading)."""
        if not self.fields and not self.lines:
            return
        for p in paras:
            if len(p.lines) == 1 and id(p.lines[0]) in self.lines:
                p.role, p.level = "form_field", None
            # a paragraph with values filled into its text names its fields too
            fields = [f for ln in p.lines for f in self.fields.get(id(ln), ())]
            if fields:
                p.extra["fields"] = fields

    def keep_in_body(self, lines: list[Line], decisions: dict) -> None:
        """A filled field is the page's content even in the header band: no furniture role."""
        if not self.fields:
            return
        for ln in lines:
            if ln.role is not None and id(ln) in self.fields:
                ln.role = None
                decisions.pop(id(ln), None)


def _is_label(ln: Line, cfg: TextLayerConfig) -> bool:
    t = ln.text.rstrip()
    if not t.endswith((":", "：")):
        return False
    t = t.lstrip()
    return len(t) <= cfg.form_label_max_chars and ln.words() <= cfg.form_label_max_words


def _label_rows(labels: list[Line], lines: list[Line]) -> list[list[Line]]:
    """The rows the labels are on (lines overlapping a label vertically by at least half the
    smaller height), left to right, each once. Only the labels' rows are looked at: a page of
    prose with a few "Note:" lines costs a few bisections."""
    by_y = sorted(lines, key=lambda ln: ln.yc)
    ys = [ln.yc for ln in by_y]
    tallest = max(ln.height for ln in by_y)
    rows: list[list[Line]] = []
    seen: set[frozenset[int]] = set()
    for lab in labels:
        lo = bisect.bisect_left(ys, lab.y0 - tallest)
        hi = bisect.bisect_right(ys, lab.y1 + tallest)
        row = sorted((ln for ln in by_y[lo:hi] if _overlap_y(lab.bbox, ln.bbox) >= 0.5 * min(lab.height, ln.height)),
                     key=lambda ln: ln.x0)
        key = frozenset(id(ln) for ln in row)
        if key not in seen:
            seen.add(key)
            rows.append(row)
    return rows


def _row_pairs(row: list[Line], page_width: float, cfg: TextLayerConfig) -> list[tuple[Line, Line]]:
    """(label, value) pairs of a row made only of "Label:" + value pairs (and lone labels)."""
    pairs = []
    i = 0
    while i < len(row):
        ln = row[i]
        if not _is_label(ln, cfg):
            return []  # text that is no label where a label should be: not a row of pairs
        nxt = row[i + 1] if i + 1 < len(row) else None
        if nxt is None or _is_label(nxt, cfg):
            i += 1  # a label without a value (an empty printed field)
            continue
        if nxt.x0 - ln.x1 > cfg.form_pair_max_gap_share * page_width or nxt.words() > cfg.form_value_max_words:
            return []
        pairs.append((ln, nxt))
        i += 2
    return pairs


_SENTENCE_END = (".", "!", "?", ";", ":")


def _next_to(a: Line, b: Line) -> bool:
    """`b` is the line right under `a` in one paragraph: overlapping, a line gap at most 0.6
    of a line, the same type size."""
    h = max(a.height, b.height)
    return (b.yc > a.yc and -0.5 * h <= b.y0 - a.y1 <= 0.6 * h and min(a.x1, b.x1) > max(a.x0, b.x0)
            and abs(a.size - b.size) <= 0.6)


def _reads_on_from_above(ln: Line, pool: list[Line], forms: set[int]) -> bool:
    """`ln` continues the unfinished line above it (a paragraph's second line); form lines
    (`forms`: labels with their values, two rows tall when the label is above) are no paragraph."""
    return any(o is not ln and o.horizontal and id(o) not in forms and _next_to(o, ln)
               and not o.text.rstrip().endswith(_SENTENCE_END) for o in pool)


def _in_running_text(ln: Line, pool: list[Line], forms: set[int]) -> bool:
    """`ln` is a line of a paragraph: it continues the line above it, or the line below it
    continues it (neither ends a sentence between them)."""
    if _reads_on_from_above(ln, pool, forms):
        return True
    if ln.text.rstrip().endswith(_SENTENCE_END):
        return False
    return any(o is not ln and o.horizontal and id(o) not in forms and _next_to(ln, o)
               and o.text.lstrip()[:1].islower() for o in pool)


def _runs_on(lab: Line, val: Line, lines: list[Line], labels: set[int], values: set[int]) -> bool:
    """The pair's text runs on to the line below (a run-in heading "Cost:" and its paragraph, a
    column of prose): the line just below, under the pair, is neither the next row's label nor
    its value, or it is a value that reads on (lower case after an unfinished line)."""
    h = max(lab.height, val.height)
    bottom = max(lab.y1, val.y1)
    if val.text.lstrip()[:1].islower():  # ...or reads on from the line above it
        for ln in lines:
            if (ln is not val and ln.horizontal and ln.yc < val.yc and -0.5 * h <= val.y0 - ln.y1 <= 0.6 * h
                    and min(ln.x1, val.x1) > max(ln.x0, val.x0) and id(ln) not in labels
                    and not ln.text.rstrip().endswith(_SENTENCE_END)):
                return True
    for ln in lines:
        if ln is val or ln is lab or not ln.horizontal or ln.yc <= val.yc:
            continue
        if not -0.5 * h <= ln.y0 - bottom <= 0.6 * h or min(ln.x1, val.x1) <= max(ln.x0, lab.x0):
            continue
        if id(ln) in labels:
            continue
        if id(ln) in values:
            if (ln.text.lstrip()[:1].islower() and val.words() >= 3
                    and not val.text.rstrip().endswith(_SENTENCE_END)):
                return True
            continue
        return True
    return False


def _median(xs: list[float]) -> float:
    s = sorted(xs)
    return s[len(s) // 2] if s else 10.0


def keep_layer_for_fields(page: pymupdf.Page, decision, min_chars: int):
    """Triage's decision, or `text_layer` for a sparse page whose content is its form fields.

    Triage judges the text the page draws: a form whose values live only in its fields (/V,
    no appearance drawn) has little or none, and goes `blank` (nothing to read) or `ocr` (its
    printed labels are ink without enough text). The fields are read from the file, so such a
    page is read from its layer; the ink check after reading still sends rows of unread ink to
    OCR. Pages with a picture (a scanned form under its fields) keep their route: the OCR
    route reads the picture and does not read widgets (the fields' values are not output there)."""
    if decision.route not in ("blank", "ocr") or page.first_widget is None:
        return decision
    if decision.scores.get("sizeable_images", 0) or decision.scores.get("visible_chars", 0) >= min_chars:
        return decision  # a picture to read, or a layer triage found untrustworthy: its call stands
    n, chars = 0, 0
    for w in page.widgets():
        if w.field_display in _HIDDEN_DISPLAY or w.field_type not in (_CHECKBOX, _RADIO, _COMBO, _LIST, _TEXT):
            continue
        value = w.field_value
        if w.field_type in _BOXES:
            filled = value not in (None, "", "Off", False)
        else:
            filled = bool(str(value or "").strip()) and not (w.field_type == _TEXT and w.field_flags & _PASSWORD)
        if filled:
            n += 1
            chars += len(str(value)) if w.field_type not in _BOXES else 1
    if not n:
        return decision
    why = (f"{n} filled form field(s) hold {chars} character(s) the page's text does not draw: the page is read "
           f"from its text layer and fields, not as {decision.route}")
    return decision.model_copy(update={"route": "text_layer", "reasons": [*decision.reasons, why]})
