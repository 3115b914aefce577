"""The load report's time to a refusal (429/503 and their gRPC codes): how long a refused caller
waited for its answer, beside the latency of the answered ones. From recorded samples (no server)."""

from __future__ import annotations

from load_tests.report import client_headline, summarize

T0 = 1_700_000_000.0


def _record(i: int, status: str, latency_ms: float, outcome: str) -> dict:
    return {"t": T0 + i, "client": "http", "input": "x", "op": "convert", "latency_ms": latency_ms,
            "outcome": outcome, "kind": status, "pages": 1 if outcome == "ok" else 0,
            "routes": ["ocr"] if outcome == "ok" else [], "users": 4}


def test_refusals_get_their_own_latency_and_other_errors_are_not_refusals():
    recs = [_record(i, "200", 2000.0, "ok") for i in range(4)]
    recs += [_record(10 + i, "503:overloaded", 10.0 * (i + 1), "error") for i in range(10)]  # 10..100 ms
    recs += [_record(20, "429:too_many_requests", 5.0, "error"), _record(21, "UNAVAILABLE:overloaded", 7.0, "error")]
    recs += [_record(22, "504:timeout", 25000.0, "error"), _record(23, "422:bad_input", 3.0, "expected")]
    c = summarize(recs, sent=len(recs), wall_s=30.0)
    ref = c["refusal_latency"]
    assert ref["count"] == 12 and ref["max_ms"] == 100.0  # the 504 and the 422 are no refusals
    assert c["latency"]["count"] == 4 and c["errors"]["504:timeout"] == 1
    text = "\n".join(client_headline(c))
    assert "Time to a refusal" in text and "(12 refusals)" in text
