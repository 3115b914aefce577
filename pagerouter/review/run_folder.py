"""Find the converted documents of a `convert -o` or `batch` output folder.

Every `*.json` below the folder that parses as a `Document` is one document (the batch's
journal, summary and manifest files do not, and are skipped); its `.md` sibling is not needed.
A batch journal (`pagerouter-batch*.journal.jsonl`) names each output's input file, which is
where page images can be rendered from afterwards.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from ..model import Document


@dataclass
class RunDocument:
    """One converted document of the run."""

    rel: str                  # its JSON's path below the run folder, without `.json` (posix)
    doc: Document
    source: Path | None = None  # the input file it was converted from, when known and present


def load_run(run_dir: Path, pdf_dir: Path | None = None) -> list[RunDocument]:
    """The run's documents, sorted by path; `pdf_dir` is searched for their source files."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise FileNotFoundError(f"{run_dir}: not a folder")
    journal_inputs = _journal_inputs(run_dir)
    found: list[RunDocument] = []
    for path in sorted(run_dir.rglob("*.json")):
        if path.name.startswith("pagerouter-batch"):
            continue
        try:
            doc = Document.model_validate_json(path.read_bytes())
        except (ValidationError, ValueError, OSError):
            continue  # not a pagerouter document (a summary, a manifest, someone else's file)
        rel = path.relative_to(run_dir).with_suffix("").as_posix()
        found.append(RunDocument(rel, doc, _source(rel, doc, run_dir, journal_inputs, pdf_dir)))
    return found


def _journal_inputs(run_dir: Path) -> dict[str, str]:
    """{output rel: input path} from every batch journal in the folder (later lines win)."""
    inputs: dict[str, str] = {}
    for journal in sorted(run_dir.glob("pagerouter-batch*.journal.jsonl")):
        for line in journal.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                rec = json.loads(line)
            except ValueError:
                continue  # a torn last line of a killed run
            if isinstance(rec, dict) and rec.get("rel") and rec.get("input"):
                inputs[str(rec["rel"])] = str(rec["input"])
    return inputs


def _source(rel: str, doc: Document, run_dir: Path, journal: dict[str, str], pdf_dir: Path | None) -> Path | None:
    """The first existing candidate: the journal's input, then `pdf_dir`/<rel + source suffix>,
    `pdf_dir`/<source name>, then the recorded source itself (relative to the folder or as given)."""
    name = Path(doc.source)
    candidates: list[Path] = []
    if rel in journal:
        candidates.append(Path(journal[rel].removeprefix("file://")))
    if pdf_dir is not None:
        candidates += [Path(pdf_dir) / (rel + name.suffix), Path(pdf_dir) / name.name]
    if doc.source not in ("", "-"):
        candidates += [run_dir / name, name]
    for c in candidates:
        if c.is_file():
            return c
    return None
