"""What the CLI's subcommands share (`convert`, `triage`, `batch`, `pagerouter client`): exit
codes, the config of `--config`, one-line usage errors and the request-option flags. Its own
module so pagerouter/cli/main.py and pagerouter/batch/ import it, not each other."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

EXIT_OK, EXIT_PAGES_FAILED, EXIT_USAGE = 0, 1, 2


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
