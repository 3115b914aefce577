"""The batch's progress line and its end summary.

Progress (stderr): files done/total, pages, pages/s, ETA, flagged and failed counts; redrawn in
place on a terminal, else one line at most every `every_s` seconds (logs of a Ray job stay short).
Files the document filter skipped count as `filtered` (listed with their reasons), neither done
nor failed. The summary covers every file of this run's plan, including those an earlier run finished (their
journal records carry the figures); pages/s and files/s are of the files converted in this run.
"""

from __future__ import annotations

import sys
import time

from ..render.output import add_route_rows, route_order, route_table
from .journal import Outcome


class BatchProgress:
    def __init__(self, total: int, enabled: bool, every_s: float = 10.0):
        self.total, self.enabled, self.every_s = total, enabled, every_s
        self.tty = sys.stderr.isatty()
        self.t0 = time.perf_counter()
        self.last = self.t0  # the first plain line after every_s, not on the first file
        self.filtered = 0
        self.files = self.converted = self.pages = self.flagged = self.failed_files = self.failed_pages = 0

    def __call__(self, out: Outcome) -> None:
        rec = out.record
        self.files += 1
        if rec.get("status") == "failed":
            self.failed_files += 1
            if out.converted and self.enabled:
                self._clear()
                print(f"pagerouter: failed: {rec.get('error')}", file=sys.stderr)
        self.filtered += rec.get("status") == "skipped"
        st = rec.get("page_status") or {}
        self.flagged += st.get("flagged", 0)
        self.failed_pages += st.get("failed", 0)
        if out.converted:
            self.converted += 1
            self.pages += rec.get("pages", 0)
        now = time.perf_counter()
        if self.enabled and (self.tty or now - self.last >= self.every_s or self.files == self.total):
            self.last = now
            self._draw(now)

    def line(self, now: float) -> str:
        dt = max(now - self.t0, 1e-9)
        rate = self.pages / dt
        left = self.total - self.files
        eta = f"{left * dt / self.files:.0f}s" if self.files else "?"
        return (f"files {self.files}/{self.total}  pages {self.pages}  {rate:.1f} pages/s  ETA {eta}  "
                f"flagged {self.flagged}  failed {self.failed_files} files/{self.failed_pages} pages"
                + (f"  skipped by filter {self.filtered}" if self.filtered else ""))

    def _draw(self, now: float) -> None:
        text = self.line(now)
        if self.tty:
            sys.stderr.write("\r" + text[:150].ljust(100))
        else:
            sys.stderr.write(text + "\n")
        sys.stderr.flush()

    def _clear(self) -> None:
        if self.tty:
            sys.stderr.write("\r" + " " * 100 + "\r")

    def close(self) -> None:
        if self.enabled and self.tty:
            sys.stderr.write("\n")


def summarize(outcomes: list[Outcome], wall_s: float) -> dict:
    """The figures of the end summary (also written to OUTDIR as JSON)."""
    routes: dict[str, dict[str, float]] = {}
    s = {"files": len(outcomes), "done": 0, "failed": 0, "converted_this_run": 0, "skipped": 0,
         "filtered": 0,
         "pages": 0, "flagged_pages": 0, "failed_pages": 0, "pages_this_run": 0, "wall_seconds": round(wall_s, 3)}
    failed, filtered = [], []
    for out in outcomes:
        rec = out.record
        if rec.get("status") == "skipped":  # the document filter's: neither converted nor failed
            s["filtered"] += 1
            filtered.append({"input": rec.get("shown") or rec.get("input"), "reasons": rec.get("reasons") or []})
            continue
        s["converted_this_run" if out.converted else "skipped"] += 1
        if rec.get("status") != "done":
            s["failed"] += 1
            failed.append({"input": rec.get("shown") or rec.get("input"), "error": rec.get("error")})
            continue
        s["done"] += 1
        s["pages"] += rec.get("pages", 0)
        s["flagged_pages"] += rec.get("page_status", {}).get("flagged", 0)
        s["failed_pages"] += rec.get("page_status", {}).get("failed", 0)
        if out.converted:
            s["pages_this_run"] += rec.get("pages", 0)
        add_route_rows(routes, rec.get("routes") or {})
    s["routes"] = {k: {**v, "seconds": round(v["seconds"], 3)} for k, v in
                   sorted(routes.items(), key=lambda kv: route_order(kv[0]))}
    s["pages_per_s"] = round(s["pages_this_run"] / wall_s, 3) if wall_s > 0 else 0.0
    s["files_per_s"] = round(s["converted_this_run"] / wall_s, 3) if wall_s > 0 else 0.0
    s["failed_files"] = sorted(failed, key=lambda f: str(f["input"]))
    if filtered:  # only when the filter skipped something: a run without it keeps its old summary
        s["filtered_files"] = sorted(filtered, key=lambda f: str(f["input"]))
    return s


def format_summary(s: dict) -> str:
    lines = route_table(s["routes"]).splitlines()
    lines.append(
        f"files: {s['files']} ({s['done']} done, {s['failed']} failed"
        + (f", {s['filtered']} skipped by the filter" if s["filtered"] else "")
        + f"; {s['converted_this_run']} converted now, "
        f"{s['skipped']} from earlier runs); {s['pages_this_run']} pages in {s['wall_seconds']:.1f} s = "
        f"{s['pages_per_s']:.2f} pages/s, {s['files_per_s']:.2f} files/s"
    )
    for f in s["failed_files"]:
        lines.append(f"failed: {f['error']}")
    for f in s.get("filtered_files", []):
        lines.append(f"skipped: {f['input']}: {'; '.join(f['reasons'])}")
    return "\n".join(lines)
