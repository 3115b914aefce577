"""The CLI's progress bar (tqdm on stderr): drawn on a terminal for a multi-page document, never
into a pipe or a log file."""

from __future__ import annotations

import io
import sys

from pagerouter.cli.main import ProgressBar


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_bar_follows_the_pages_on_a_terminal_and_clears_its_line(monkeypatch):
    term = _Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    bar = ProgressBar("report.pdf", enabled=True)
    for done in (1, 2, 3):
        bar(None, done, 3)
    assert bar.bar.n == 3 and bar.bar.total == 3
    drawn = term.getvalue()
    assert "report.pdf" in drawn and "/3 " in drawn  # tqdm redraws at most every 0.1 s: counts may lag
    bar.close()
    import threading

    assert threading.active_count() == 1  # no tqdm monitor thread left behind (isolation forks want one thread)
    assert term.getvalue().endswith("\r")  # leave=False: the bar's line is cleared for the summary


def test_no_bar_in_a_pipe_for_one_page_or_when_quiet(monkeypatch):
    pipe = io.StringIO()
    monkeypatch.setattr(sys, "stderr", pipe)
    for bar, total in ((ProgressBar("a.pdf", enabled=True), 5), (ProgressBar("a.pdf", enabled=False), 5)):
        bar(None, 1, total)
        bar.close()
    term = _Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    one = ProgressBar("one.pdf", enabled=True)
    one(None, 1, 1)
    one.close()
    assert pipe.getvalue() == "" and term.getvalue() == ""
