"""What the CLI's subcommands share (`convert`, `triage`, `batch`, `pagerouter client`): exit
codes, the config of `--config`, one-line usage errors and the request-option flags. Its own
module so pagerouter/cli/main.py and pagerouter/batch/ import it, not each other."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

EXIT_OK, EXIT_PAGES_FAILED, EXIT_USAGE = 0, 1, 2
EXIT_INPUT = EXIT_PAGES_FAILED
"""An input could not be converted whole: it could not be opened at all, some of its pages failed,
or its output could not be written. The run goes on with the other inputs."""
EXIT_INTERNAL = 3
"""A bug or an unexpected failure (a one-line error; PAGEROUTER_DEBUG=1 shows the traceback),
told apart from usage errors so a script can tell "fix the command" from "report this"."""
EXIT_SERVER = 4
"""`client`/`job`: the server could not be reached, refused the caller (API key) or stayed busy
past the retries; neither the command nor the input is at fault, so a script may retry later."""
EXIT_INTERRUPTED = 130

EXIT_CODES_HELP = """exit codes:
  0    every page of every input came out (ok or flagged)
  1    input errors: an input could not be opened, some pages failed (they are in the output
       with status `failed` and the error), or an output could not be written
  2    usage errors: bad flags or values, a bad --config, a command whose extra is not installed
  3    internal error: a bug or an unexpected failure (PAGEROUTER_DEBUG=1 shows the traceback)
  4    client commands: the server could not be reached, refused the API key, or stayed busy
  130  interrupted (Ctrl-C)"""

# A package only an extra installs (its import name's top level) -> that extra (pyproject.toml's
# optional-dependencies; tests/test_cli_conventions.py checks the two agree).
EXTRA_OF_MODULE = {
    "ray": "serve",
    "fastapi_offline": "serve",
    "opentelemetry": "serve",
    "grpc_tools": "serve",
    "httpx": "client",
    "grpc": "client",
    "google": "client",  # google.protobuf
    "tenacity": "client",
    "matplotlib": "bench",
    "locust": "load",
}


def install_hint(extra: str) -> str:
    return f'pip install "pagerouter[{extra}]"'


def missing_extra(command: str, exc: ImportError, extra: str | None = None) -> str | None:
    """The one-line error for `pagerouter COMMAND` failing on a package an extra installs (None when
    the missing module is not one of those: then it is a bug, reported as such)."""
    module = getattr(exc, "name", None) or ""
    extra = extra or EXTRA_OF_MODULE.get(module.split(".")[0])
    if extra is None:
        return None
    what = f"the {module!r} package, which is not installed" if module else "packages that are not installed"
    return f"`pagerouter {command}` needs {what}: {install_hint(extra)}"


def add_verbosity_flags(p: argparse.ArgumentParser) -> None:
    """`-q/--quiet` and `-v/--verbose` on a subcommand's parser, each unless it has it already (a
    command's own `-q` also silences its progress and summary)."""
    have = p._option_string_actions  # argparse has no public "has this flag"
    if "-q" not in have and "--quiet" not in have:
        p.add_argument("-q", "--quiet", action="store_true", help="errors only on stderr (log level ERROR)")
    if "-v" not in have and "--verbose" not in have:
        p.add_argument("-v", "--verbose", action="count", default=0,
                       help="more log lines on stderr: -v INFO, -vv DEBUG (pagerouter's own loggers)")


OUR_LOGGERS = ("pagerouter",)  # the serving folders are pagerouter.graph, pagerouter.clients, ... too


def setup_logging(args):
    """Apply the log level of `-q`/`-v` (WARNING by default, ERROR with -q, INFO with -v, DEBUG with
    -vv) on stderr: other libraries stay at WARNING (ERROR with -q) so -vv is ours, not theirs.
    Returns the function that puts the previous levels back (`main` called in-process, by tests or
    a notebook, leaves the host's logging as it found it)."""
    import logging

    verbose = getattr(args, "verbose", 0) or 0
    quiet = bool(getattr(args, "quiet", False))
    ours = logging.ERROR if quiet else {0: logging.WARNING, 1: logging.INFO}.get(verbose, logging.DEBUG)
    root = logging.getLogger()
    loggers = [root, *(logging.getLogger(name) for name in OUR_LOGGERS)]
    before = [(lg, lg.level) for lg in loggers]
    added = None
    if not root.handlers:
        added = logging.StreamHandler(sys.stderr)
        added.setFormatter(logging.Formatter("pagerouter: %(levelname)s: %(name)s: %(message)s"))
        root.addHandler(added)
    root.setLevel(logging.ERROR if quiet else logging.WARNING)
    for lg in loggers[1:]:
        lg.setLevel(ours)

    def restore() -> None:
        for lg, level in before:
            lg.setLevel(level)
        if added is not None:
            root.removeHandler(added)

    return restore


def load_cli_config(path: Path | None, page_markers: bool = False):
    """The config of `--config` (defaults without it); a bad file exits 2 with one line."""
    from pagerouter.config import load_config

    try:
        cfg = load_config(path)
    except (ValueError, FileNotFoundError) as exc:
        raise SystemExit(usage_error(str(exc)))
    except Exception as exc:  # noqa: BLE001 - pydantic ValidationError
        raise SystemExit(usage_error(f"{path}: invalid config: {exc}"))
    if page_markers:
        cfg.output.page_markers = True
    return cfg


def usage_error(msg: str) -> int:
    """Print `pagerouter: error: MSG` on stderr; returns the usage exit code."""
    print(f"pagerouter: error: {msg}", file=sys.stderr)
    return EXIT_USAGE


def add_option_flags(p: argparse.ArgumentParser) -> None:
    """The request options (pagerouter/flow/options.py) as flags; `pagerouter client` shares them."""
    p.add_argument(
        "--ocr", choices=["auto", "force", "off"], default=None,
        help="auto (default): triage decides; force: OCR every page, even with a good text layer; "
        "off: text layers only (pages that need OCR come back flagged `ocr_off`)",
    )
    p.add_argument("--lang", metavar="PACKS", help="Tesseract language packs for this run's Tesseract readings, e.g. eng+deu")
    p.add_argument("--embed-images", action="store_true",
                   help="figure blocks carry their image as base64 PNG (image_png_base64) in the JSON")


def option_values(args) -> dict:
    """The request options of the option flags, for `Converter.convert` or a client call."""
    return {"ocr": args.ocr, "languages": args.lang, "images": True if args.embed_images else None}


def option_problem(exc: Exception) -> str:
    """An option error worded with the flags' names."""
    return (str(exc).replace("languages", "--lang").replace("images", "--embed-images")
            .replace("escalation_wait_s", "--escalation-wait-s"))


def client_error_exit(exc: BaseException, message: str | None = None) -> int:
    """The exit code and one stderr line for a failed call to a server (`client`, `job`): the
    server's own verdict on the request (bad flags or an unknown job id 2, a bad input 1), else
    EXIT_SERVER."""
    code = getattr(exc, "code", None)
    text = message or str(exc)
    if code in ("bad_request", "not_found"):
        return usage_error(text)
    print(f"pagerouter: error: {text}", file=sys.stderr)
    return EXIT_INPUT if code in ("bad_input", "bad_pages", "too_many_pages", "too_large") else EXIT_SERVER
