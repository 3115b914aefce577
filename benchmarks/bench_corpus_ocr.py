"""The OCR path on the real corpus: routes, flag share, and what escalation changed.

    python benchmarks/bench_corpus_ocr.py [--corpus ../shared/corpus/real] [--max-pages 200] [--no-escalation]

For every page triage sends to `ocr` or `mixed`, runs layout -> small reader -> checks, and for
flagged pages the CPU escalation (vote), printing per page: seconds, flagged checks, and
how much the escalated text differs from the first reading (character edit share). There is
no ground truth for these files, so "changed" is measured, "improved" is not claimed.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from difflib import SequenceMatcher
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from pagerouter.common.pymupdf_setup import skip_pymupdf_layout  # noqa: E402

skip_pymupdf_layout()  # a process of ours, as the CLI's: PyMuPDF's unused layout model is not built

from pagerouter.config import PagerouterConfig  # noqa: E402
from pagerouter.intake.inputs import InputError, open_source  # noqa: E402
from pagerouter.flow.engines import EngineSet  # noqa: E402
from pagerouter.ocr.checks import check_reading  # noqa: E402
from pagerouter.flow.pipeline import DocumentTriage  # noqa: E402


def page_text(reading) -> str:
    return "\n".join(b.text for b in reading.blocks if b.text)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", type=Path, default=REPO.parent / "shared" / "corpus" / "real")
    ap.add_argument("--max-pages", type=int, default=200, help="stop after this many OCR pages")
    ap.add_argument("--no-escalation", action="store_true")
    args = ap.parse_args()
    cfg = PagerouterConfig()
    engines = EngineSet(cfg.ocr)
    triage = DocumentTriage(cfg)
    routes: Counter[str] = Counter()
    flagged = escalated = changed = 0
    ocr_pages = 0
    t_read = t_esc = 0.0
    flag_names: Counter[str] = Counter()
    for f in sorted(args.corpus.glob("*.pdf")):
        try:
            src = open_source(f)
        except InputError as exc:
            print(f"{f.name}: {exc.message}")
            continue
        for outcome in triage.iter_pages(src, list(range(1, src.page_count + 1))):
            routes[outcome.page.route or "failed"] += 1
            task = outcome.task
            if task is None or ocr_pages >= args.max_pages:
                continue
            ocr_pages += 1
            t0 = time.perf_counter()
            layout = engines.get("layout").detect_batch([task])[0]
            first = engines.get("small_reader").read_batch([task], [layout])[0]
            first.checks = list(first.checks) + check_reading(task, first, cfg.ocr.checks)
            dt = time.perf_counter() - t0
            t_read += dt
            bad = [c.name for c in first.checks if not c.passed]
            line = f"{f.name} p{task.number} [{outcome.page.route}] read {dt:5.1f}s rot {layout.rotation:3d}"
            if bad:
                flagged += 1
                flag_names.update(bad)
                line += f" FLAGGED {','.join(bad)}"
                if not args.no_escalation and cfg.ocr.escalation.enabled:
                    t1 = time.perf_counter()
                    second = engines.get("escalation").escalate(task, first)
                    de = time.perf_counter() - t1
                    t_esc += de
                    escalated += 1
                    a, b = page_text(first), page_text(second)
                    diff = 1 - SequenceMatcher(None, a, b, autojunk=False).ratio() if (a or b) else 0.0
                    changed += diff > 0.01
                    still = [c.name for c in (second.checks or check_reading(task, second, cfg.ocr.checks)) if not c.passed]
                    line += f" -> vote {de:5.1f}s, text changed {diff:.1%}, still flagged: {','.join(still) or 'no'}"
            print(line, flush=True)
        src.close()
    print()
    print(f"routes over the corpus: {dict(routes)}")
    print(f"OCR pages read: {ocr_pages}; seconds/page (layout+read+checks): {t_read / max(ocr_pages, 1):.2f}")
    print(f"flagged after the small reader: {flagged} ({flagged / max(ocr_pages, 1):.0%}); by check: {dict(flag_names)}")
    if escalated:
        print(f"escalated: {escalated}, seconds/page {t_esc / escalated:.1f}; text changed on {changed} of them")


if __name__ == "__main__":
    main()
