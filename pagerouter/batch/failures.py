"""How a batch words one file's failure: one line that names the file, for its journal record,
the progress line and the summary, whichever mode (`--local`, `--endpoint`, `--grpc`, `--ray`)
and whichever stage (read, open, convert, write) it failed in."""

from __future__ import annotations

import os

from pagerouter.intake.inputs import InputError


def one_line(exc: BaseException) -> str:
    """The first line of an exception, after its type; an `InputError` as it is (its message
    already says what is wrong with which file, as `pagerouter convert` prints it)."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return text if isinstance(exc, InputError) else f"{type(exc).__name__}: {text}"[:500]


def file_error(shown: str, exc: BaseException, doing: str = "") -> str:
    """One line naming the file `shown`: `InputError` messages and most others already do (the
    converter and the clients are given `shown` as the file's name), the rest get it in front.
    `doing` says what failed when the exception alone would not ("cannot write its outputs")."""
    msg = one_line(exc)
    if doing:
        return f"{shown}: {doing}: {msg}"
    base = os.path.basename(shown)
    named = isinstance(exc, InputError) or shown in msg or bool(base and base in msg)
    return msg if named else f"{shown}: {msg}"
