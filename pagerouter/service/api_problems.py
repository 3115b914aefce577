"""Input problems as an API caller meets them: worded without CLI flags, and a single page
number below 1 refused by name (before it could read as a range)."""

from __future__ import annotations

from pagerouter.wire.items import InputProblem

# The core's input errors speak to the CLI user ("(--password)"); the API has a field instead.
_CLI_PASSWORD_HINT = "(--password)"
_API_PASSWORD_HINT = "(send it in the request's `password` field)"


def for_api(problem: InputProblem) -> InputProblem:
    """An input problem worded for an API caller (no CLI flags)."""
    if _CLI_PASSWORD_HINT not in problem.message:
        return problem
    return InputProblem(
        problem.code, problem.message.replace(_CLI_PASSWORD_HINT, _API_PASSWORD_HINT), problem.source,
        problem.page, problem.detail.replace(_CLI_PASSWORD_HINT, _API_PASSWORD_HINT),
    )


def single_page_problem(number: int, name: str) -> InputProblem | None:
    """A page number below 1 is a bad selection, not a range: "-3" would read as pages 1-3."""
    if number >= 1:
        return None
    detail = f"page {number} requested; pages are numbered from 1"
    return InputProblem("bad_pages", f"{name}: {detail}", name, None, detail)


def single_page_field_problem(raw: str | None, name: str) -> InputProblem | None:
    """The same for the `page` field of an HTTP request, as sent (default 1); a value that is not
    an integer is left to the options' own validation."""
    text = (raw or "1").strip()
    if text.lstrip("-").isdecimal() and text.isascii():  # "-3" is a page below 1, not a range
        return single_page_problem(int(text), name)
    return None
