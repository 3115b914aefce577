"""Markdown escaping of page text: what a PDF says stays text when the Markdown is rendered.

A page's text is untrusted input. Written into Markdown as is, a line `# Total` becomes a
heading, `<script>` becomes live HTML in any app that renders our Markdown to HTML, `*` and `_`
turn words into emphasis, a line `1. ` starts a list and a run of backticks ends a code fence.
So the Markdown writer (`output.py`) passes every piece of page text through here, while the
structure it writes on purpose (heading `#`s, list markers, tables, fences, comments) stays
live. The JSON keeps the raw text: escaping happens only when Markdown is written.

The rule is CommonMark's (with GFM's tables and strikethrough): a character is escaped only
where it would be live, so ordinary punctuation stays as it is and the output stays readable:

* anywhere: `\\` and backticks; `*`, `_` and `~` where they could close emphasis or
  strikethrough (after a non-space; an intraword `_` as in `snake_case` cannot); `<` where it
  could open a tag, comment or autolink (before a letter, `/`, `!` or `?`); `&` where it would
  start a character reference (`&amp;`); `]` before `(`, `[` or `:` (a link, an image, a
  reference definition); `|` (a GFM table row).
* at the start of a line: `#` headings, `>` quotes, `-`/`+`/`*` bullets, `1.`/`1)` numbers,
  thematic breaks and setext underlines (`---`, `===`); leading spaces (indented code) go.

An opener with no closer is not emphasis, so escaping the closers is enough (`3 * 4` stays).
`<sup>x</sup>` and `<sub>x</sub>` are the one HTML the readers write themselves (raised and
lowered digits, see `textlayer/lines.py`); a balanced pair with plain text inside stays live.

Blocks whose text is Markdown by design (a VLM's page answer, `markdown_mode`) keep their
inline Markdown; only their HTML is made inert (`&lt;`), except the plain table tags a model
writes for a table the parser could not split into cells.
"""

from __future__ import annotations

import re

# ASCII punctuation: the characters a CommonMark backslash escapes (anything else keeps the `\`)
_PUNCT = set("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")

_OWN_TAG = re.compile(r"<(sup|sub)>[^<>\n]{1,40}</\1>")
"""Raised/lowered text as the readers tag it; kept live (harmless formatting, no attributes)."""

_TABLE_TAG = re.compile(
    r"</?(?:table|thead|tbody|tfoot|tr|th|td|caption|br|sup|sub|b|i|strong|em)"
    r"(?:\s+(?:colspan|rowspan)\s*=\s*\"?\d{1,3}\"?)*\s*/?>",
    re.IGNORECASE,
)
"""The tags a model's Markdown may keep: table structure and plain formatting, no attributes but
spans (no scripts, no event handlers, no links, no styles)."""

_ENTITY = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")
_TAG_START = re.compile(r"<[A-Za-z/!?]")
_ORDERED = re.compile(r"(\d{1,9})([.)])(?=[ \t]|$)")
_MARKER = re.compile(r"\w{1,9}[.)](?=[ \t]|$)")  # the number a list item kept: `3.`, `b)`, `iv.`
_BULLET = re.compile(r"[-+*](?=[ \t]|$)")
_HEADING = re.compile(r"#{1,6}(?=[ \t]|$)")
_BREAK = re.compile(r"(?:([-*_])[ \t]*)(?:\1[ \t]*){2,}$")  # thematic break: 3+ of one of - * _
_UNDERLINE = re.compile(r"(?:=+|-+)[ \t]*$")  # setext heading underline
_DELIMITER = re.compile(r"[:-][-: \t|\\]*$")  # a GFM table's delimiter row (`:--`, `---|---`)
_HEADING_CLOSE = re.compile(r"(^|[ \t])(#+)([ \t]*)$")


def _space(c: str) -> bool:
    return c == "" or c.isspace()


_SPECIAL = re.compile(r"<(sup|sub)>[^<>\n]{1,40}</\1>|[\\`|*~_<&\]\[]")
"""What `escape_inline` looks at: our own tags (kept whole) and the characters that may be live;
everything else is copied as is (a regex scan: rendering stays about 1 ms a page)."""


def escape_inline(text: str, brackets: bool = False) -> str:
    """`text` with every inline Markdown/HTML construct made literal (see the module doc).
    Line starts are not treated here (`escape_text` does that). `brackets`: escape every `[`
    and `]` (text inside `![...]`, where any bracket would end or nest the alt text)."""

    def one(m: re.Match) -> str:
        c = m.group()
        if len(c) > 1:  # <sup>..</sup> / <sub>..</sub>: ours
            return c
        i = m.start()
        prev = text[i - 1] if i else ""
        if c == "<":
            return "\\<" if _TAG_START.match(text, i) else "<"
        if c == "&":
            return "\\&" if _ENTITY.match(text, i) else "&"
        if c in "\\`|":
            return "\\" + c
        if c in "*~":  # a closer needs a non-space before it: escape those, openers alone do nothing
            return c if _space(prev) else "\\" + c
        if c == "_":
            nxt = text[i + 1: i + 2]
            return c if _space(prev) or (prev.isalnum() and nxt.isalnum()) else "\\_"
        if brackets:
            return "\\" + c
        if c == "]":
            return "\\]" if text[i + 1: i + 2] in ("(", "[", ":") else "]"
        return c  # `[` alone opens nothing

    return _SPECIAL.sub(one, text)


def _escape_line_start(line: str) -> str:
    """An already inline-escaped line with a block marker at its start made literal."""
    if not line:
        return line
    if (_BREAK.match(line) or _UNDERLINE.match(line) or _HEADING.match(line) or _BULLET.match(line)
            or ("-" in line and _DELIMITER.match(line))):
        return "\\" + line if line[0] in _PUNCT else line
    if line[0] in ">":
        return "\\" + line
    m = _ORDERED.match(line)
    if m:
        return m.group(1) + "\\" + line[len(m.group(1)):]
    return line


def escape_text(text: str, keep_marker: bool = False) -> str:
    """Page text as literal Markdown: inline constructs and line-start markers escaped, each
    line's leading and trailing spaces dropped (leading ones would make indented code, two trailing
    ones a hard line break; a paragraph shows neither).

    `keep_marker`: the text starts with the list number the reader kept (`3. item`), which is
    ours to render as a list item: that one marker stays live."""
    lines = []
    for k, raw in enumerate(text.split("\n")):
        line = raw.strip(" \t")
        if k == 0 and keep_marker:
            m = _MARKER.match(line)
            if m:
                rest = line[m.end():].lstrip(" \t")
                lines.append(m.group() + (" " + _escape_line_start(escape_inline(rest)) if rest else ""))
                continue
        lines.append(_escape_line_start(escape_inline(line)))
    return "\n".join(lines)


def escape_heading(text: str) -> str:
    """Heading content (one line): inline escapes, and a trailing `#` run that CommonMark would
    take for the closing sequence kept as text."""
    s = escape_inline(" ".join(text.split()))
    m = _HEADING_CLOSE.search(s)
    if m:
        s = s[: m.start(2)] + "\\" + s[m.start(2):]
    return s


def escape_alt(text: str) -> str:
    """Image alt text (one line, inside `![...]`): inline escapes plus both brackets."""
    return escape_inline(" ".join(text.split()), brackets=True)


def escape_html(text: str) -> str:
    """Text that is Markdown by design (a model's answer): its inline Markdown stays, its HTML is
    made inert except the table and formatting tags of `_TABLE_TAG` and our `<sup>`/`<sub>`."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "<":
            m = _TABLE_TAG.match(text, i) or _OWN_TAG.match(text, i)
            if m:
                out.append(m.group())
                i = m.end()
                continue
            # an entity, not a backslash: a line that starts with a kept tag is an HTML block,
            # inside which CommonMark takes backslashes literally
            out.append("&lt;" if _TAG_START.match(text, i) else "<")
        else:
            out.append(c)
        i += 1
    return "".join(out)


def escape_math(latex: str) -> str:
    """Formula text between `$$` lines: still valid LaTeX for a math renderer, inert for one
    without math. `<`/`>` become `\\lt`/`\\gt` (a tag cannot open), `&` before a reference name
    and a line-start `#` get a backslash (`\\&`, `\\#` are LaTeX too), blank lines (which would
    end the block) go, and a `$$` inside cannot close the block early."""
    s = latex.replace("<", "\\lt ").replace(">", "\\gt ").replace("$$", "$ $")
    s = _ENTITY.sub(lambda m: "\\" + m.group(), s)
    lines = [ln for ln in s.split("\n") if ln.strip()]
    return "\n".join("\\" + ln.lstrip() if ln.lstrip().startswith("#") else ln for ln in lines)


def fence(text: str, info: str = "") -> str:
    """A fenced code block holding `text` verbatim: the fence is one backtick longer than the
    longest backtick run inside (at least three), so the text cannot close it."""
    longest = max((len(r) for r in re.findall(r"`+", text)), default=0)
    bar = "`" * max(3, longest + 1)
    return f"{bar}{info}\n{text}\n{bar}"


def unescape(md: str) -> str:
    """Markdown text with CommonMark backslash escapes removed (`\\*` -> `*`): page text as a
    reader of the rendered Markdown sees it. For comparing our Markdown with ground truth."""
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", md)
