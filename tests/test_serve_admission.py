"""Admission sized by the page rate (limits.admission_by_rate) against a real `pagerouter serve`.

One `pagerouter serve` subprocess for the module: OCR off, a short request budget (10 s before
the ingress's own 504), and slow pages from the isolation workers' test-only fault hook
(`sleep0.4@page`: every page holds a Triage worker 0.4 s more, a test double for hard pages;
a Triage replica has 2 workers, so the replica finishes at most ~5 pages/s). A burst of 8-page
documents then holds far more work than the budget: refused requests must be answered at
once (503 + Retry-After, before any admitted request completes) instead of waiting, and every
admitted one must finish inside its budget (no 504). The pure decisions are tests/test_admission_rate.py.
"""

from __future__ import annotations

import os
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pymupdf
import pytest
import yaml

from pagerouter.bench import synth
from pagerouter.isolation import FAULT_ENV
from tests.serve_fixtures import free_ports, pagerouter_serve_process

REPO = Path(__file__).resolve().parent.parent
SLOW_S = 0.4
BURST = 24
CONFIG = {
    "ocr": {"enabled": False},
    # the per-client cap out of the way (every request comes from 127.0.0.1); the replica's fixed
    # cap (32) above the burst, so any 503 here is the rate's
    "limits": {"max_requests_per_client": 64, "max_in_flight_requests": 32},
    "serve": {"escalation_timeout_s": 1, "escalation_timeout_bulk_s": 1, "page_timeout_s": 2,
              "deadline_margin_s": 2, "request_timeout_s": 12, "max_queued_requests": 64},
}
PROSE = "Plain prose the text layer reads without trouble, sentence after sentence."


pytestmark = [pytest.mark.serve, pytest.mark.slow]


def _truth(i: int) -> str:
    return f"Page {i}. {PROSE}"


def _pdf(path: Path, pages: int) -> Path:
    doc = pymupdf.open()
    for i in range(1, pages + 1):
        synth.add_text_page(doc, [_truth(i)])
    doc.save(path)
    doc.close()
    return path


def _words_per_page(doc: dict) -> list[list[str]]:
    return [" ".join(b["text"] for b in p["blocks"]).split() for p in doc["pages"]]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    d = tmp_path_factory.mktemp("admission")
    cfg = d / "serve.yaml"
    cfg.write_text(yaml.safe_dump(CONFIG))
    ray_tmp = tempfile.mkdtemp(prefix="pradm", dir="/tmp")  # short: Ray's unix sockets live there
    http_port, grpc_port = free_ports(2)
    env = {**os.environ, "RAY_ADDRESS": "local", "RAY_AUTH_MODE": "disabled", "RAY_TMPDIR": ray_tmp,
           "PYTHONPATH": str(REPO), FAULT_ENV: f"sleep{SLOW_S}@page"}
    env.pop("PAGEROUTER_API_KEY", None)
    env.pop("PAGEROUTER_API_KEY_FILE", None)
    info = {"http": f"http://127.0.0.1:{http_port}", "grpc": f"127.0.0.1:{grpc_port}", "doc": _pdf(d / "eight.pdf", 8),
            "long": _pdf(d / "long.pdf", 12), "err": d / "serve.err", "ray_tmp": Path(ray_tmp)}
    with pagerouter_serve_process(d, cfg, env, http_port, grpc_port, ray_tmp):
        yield info


def _post(url: str, pdf: Path) -> tuple[httpx.Response, float]:
    """The answer and the monotonic time it came back."""
    with httpx.Client(timeout=60) as c:
        r = c.post(url + "/v1/convert", content=pdf.read_bytes(), params={"filename": pdf.name})
    return r, time.monotonic()


def test_an_idle_replica_admits_a_document_longer_than_the_estimate_allows(served):
    # 12 pages at the start-up prior (1 s a page) are 12 s expected against 8 s allowed (0.8 of
    # the 10 s budget); with nothing in flight the replica runs it anyway (it takes ~5 s).
    r, _ = _post(served["http"], served["long"])
    assert r.status_code == 200, r.text
    assert _words_per_page(r.json()) == [_truth(i).split() for i in range(1, 13)]


def test_overload_is_refused_at_once_and_what_is_admitted_finishes_in_time(served):
    t0 = time.monotonic()
    with ThreadPoolExecutor(BURST) as pool:
        answers = list(pool.map(lambda _: _post(served["http"], served["doc"]), range(BURST)))
    codes = sorted(r.status_code for r, _ in answers)
    ok = [(r, t) for r, t in answers if r.status_code == 200]
    refused = [(r, t) for r, t in answers if r.status_code == 503]
    print(f"burst of {BURST}: {codes.count(200)} admitted, last answered {max((t for _, t in ok), default=t0) - t0:.1f} s; "
          f"{codes.count(503)} refused, last answered {max((t for _, t in refused), default=t0) - t0:.1f} s; {codes}")
    for r, _ in refused[:1]:
        print("Retry-After", r.headers.get("retry-after"), r.json()["error"]["message"])
    assert set(codes) <= {200, 503} and 200 in codes and 503 in codes, codes  # no 504: admitted ones fit
    for r, _ in ok:
        assert _words_per_page(r.json()) == [_truth(i).split() for i in range(1, 9)]
    for r, _ in refused:
        err = r.json()["error"]
        assert err["code"] == "overloaded" and "limits.admission_by_rate" in err["message"], err
        assert "expected wait" in err["message"] and "pages/s" in err["message"], err
        assert int(r.headers["retry-after"]) >= 1, r.headers
    # Refused early, not queued: every refusal came back before the first admitted document did.
    assert max(t for _, t in refused) < min(t for _, t in ok)
    # The refusals and their figures are in the replica's log.
    assert "admission refused (expected_finish" in _replica_logs(served)


def test_overload_over_grpc_is_unavailable_with_retry_after_for_unary_and_streamed_calls(served):
    from pagerouter.clients.errors import PagerouterClientError
    from pagerouter.clients.grpc_client import PagerouterGrpcClient
    from pagerouter.clients.retry_policy import RetryPolicy

    def call(i: int):
        with PagerouterGrpcClient(served["grpc"], timeout=60, retry=RetryPolicy(max_attempts=1)) as client:
            try:  # even: ConvertDocument; odd: StreamDocument (a refusal at its head is its status too)
                doc = client.convert(served["doc"]) if i % 2 == 0 else client.convert_streamed(served["doc"])
            except PagerouterClientError as exc:
                return exc
            return doc

    with ThreadPoolExecutor(BURST) as pool:
        answers = list(pool.map(call, range(BURST)))
    refused = [a for a in answers if isinstance(a, PagerouterClientError)]
    docs = [a for a in answers if not isinstance(a, PagerouterClientError)]
    print(f"gRPC burst of {BURST}: {len(docs)} converted, {len(refused)} refused "
          f"({sorted({(e.status, e.code) for e in refused})})")
    assert docs and refused
    for exc in refused:  # never DEADLINE_EXCEEDED or INTERNAL: a refusal, with its figures and hint
        assert (exc.status, exc.code) == ("UNAVAILABLE", "overloaded"), exc
        assert "limits.admission_by_rate" in exc.message and exc.retry_after_s >= 1, exc
    for doc in docs:
        assert _words_per_page(doc.model_dump()) == [_truth(i).split() for i in range(1, 9)]


def _replica_logs(served) -> str:
    """The ingress replicas' log files of this server's Ray session (Serve writes its logger there)."""
    files = served["ray_tmp"].rglob("replica_*Ingress*.log")
    return "\n".join(f.read_text(errors="replace") for f in files)
