"""Jobs for long documents against a real `pagerouter serve` (HTTP and gRPC): 202 at once, progress,
partial results while running, the same text as /v1/convert, DELETE stops the stages, a job outlives
its client, and a SIGKILLed ingress replica's job is resumed with every page exactly once.

One `pagerouter serve` subprocess for the module: OCR off (text pages only: the job machinery is
under test, not the readers), short leases, and slow pages from the stage deployments' test-only
hook (`sleep@triage` for files named `slowjob*`), which also logs every triage call with its
process id, so a test sees which pages were walked and when work stopped.
"""

from __future__ import annotations

import json
import os
import signal
import tempfile
import time
from pathlib import Path

import grpc
import httpx
import pymupdf
import pytest
import yaml

from pagerouter.service.stage_faults import FAULT_ENV, LOG_ENV
from pagerouter.bench import synth
from pagerouter.wire.protos import pagerouter_pb2 as pb
from pagerouter.wire.protos import pagerouter_pb2_grpc as pb_grpc
from tests.serve_fixtures import free_ports, pagerouter_serve_process, wait_for

REPO = Path(__file__).resolve().parent.parent
SLOW_S = 0.35
CONFIG = {
    "ocr": {"enabled": False},
    "limits": {"retry_after_s": 1},
    "serve": {
        "max_upload_mb": 0.5,
        "escalation_timeout_s": 1, "escalation_timeout_bulk_s": 1, "page_timeout_s": 5, "request_timeout_s": 60,
        "jobs": {"lease_s": 2.0, "heartbeat_s": 0.5, "poll_s": 0.3, "max_queued": 4},
    },
}


def SERVED(fn):  # noqa: N802 - a marker stack
    return pytest.mark.serve(pytest.mark.slow(fn))


def _pdf(path: Path, pages: int) -> Path:
    doc = pymupdf.open()
    for i in range(pages):
        synth.add_text_page(doc, [f"Page {i + 1}. Plain prose of page {i + 1} that the text layer reads as it is."],
                            title=f"Section {i + 1}")
    doc.save(path)
    doc.close()
    return path


class Served:
    def __init__(self, d: Path, http: str, grpc_target: str, log: Path, proc):
        self.d, self.http, self.grpc, self.log, self.proc = d, http, grpc_target, log, proc
        self.jobs_dir = d / "jobs"

    def triaged(self, source: str) -> list[tuple[int, int]]:
        """(page, pid) of every triage call logged for `source`."""
        if not self.log.exists():
            return []
        return [(int(p[2]), int(p[3])) for p in (ln.split() for ln in self.log.read_text().splitlines())
                if len(p) >= 4 and p[0] == "triage" and p[1] == source]

    def status(self, job_id: str) -> dict:
        r = httpx.get(f"{self.http}/v1/jobs/{job_id}", timeout=30)
        assert r.status_code == 200, r.text
        return r.json()

    def until(self, job_id: str, pred, timeout: float, what: str) -> dict:
        def check():
            s = self.status(job_id)
            return s if pred(s) else None

        return wait_for(check, timeout, what, interval=0.1)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    d = tmp_path_factory.mktemp("jobs")
    cfg = d / "serve.yaml"
    config = json.loads(json.dumps(CONFIG))
    config["serve"]["jobs"]["dir"] = str(d / "jobs")
    cfg.write_text(yaml.safe_dump(config))
    ray_tmp = tempfile.mkdtemp(prefix="prjob", dir="/tmp")  # short: Ray's unix sockets live there
    http_port, grpc_port = free_ports(2)
    log = d / "stages.log"
    env = {**os.environ, "RAY_ADDRESS": "local", "RAY_AUTH_MODE": "disabled", "RAY_TMPDIR": ray_tmp,
           "PYTHONPATH": str(REPO), FAULT_ENV: f"sleep{SLOW_S}@triage:slowjob", LOG_ENV: str(log)}
    for k in ("PAGEROUTER_API_KEY", "PAGEROUTER_API_KEY_FILE", "PAGEROUTER_FAULT_INJECTION_FOR_TESTS"):
        env.pop(k, None)
    with pagerouter_serve_process(d, cfg, env, http_port, grpc_port, ray_tmp) as proc:
        yield Served(d, f"http://127.0.0.1:{http_port}", f"127.0.0.1:{grpc_port}", log, proc)


def _submit(served: Served, pdf: Path, **params) -> tuple[httpx.Response, float]:
    t0 = time.monotonic()
    with httpx.Client(timeout=30) as c:  # closed right after: the job must not care
        r = c.post(served.http + "/v1/jobs", content=pdf.read_bytes(), params={"filename": pdf.name, **params})
    return r, time.monotonic() - t0


@SERVED
def test_submit_answers_at_once_partial_results_then_the_same_text_as_convert(served):
    pdf = _pdf(served.d / "slowjob-equal.pdf", 6)
    r, took = _submit(served, pdf, format="md")
    assert r.status_code == 202, r.text
    job = r.json()
    assert job["state"] in ("queued", "running") and job["pages_done"] == 0 and took < 3, (job, took)
    assert r.headers["location"] == f"/v1/jobs/{job['id']}"
    # while it runs: only the finished pages, in order, marked partial
    mid = served.until(job["id"], lambda s: 1 <= s["pages_done"] < 6, 30, "a job half done")
    partial = httpx.get(f"{served.http}/v1/jobs/{job['id']}/result", params={"format": "json"}, timeout=30)
    assert partial.status_code == 200 and partial.headers["x-job-partial"] == "true", partial.text
    got = [p["number"] for p in partial.json()["pages"]]
    assert got == list(range(1, len(got) + 1)) and len(got) < 6, got
    assert mid["state"] == "running" and mid["pages_total"] == 6
    done = served.until(job["id"], lambda s: s["state"] in ("done", "failed", "cancelled"), 60, "the job to end")
    assert done["state"] == "done" and done["pages_done"] == 6 and done["runs"] == 1, done
    assert done["pages_by_route"] == {"text_layer": 6} and done["pages_by_status"] == {"ok": 6}, done
    assert done["created_at"] <= done["started_at"] <= done["finished_at"]
    md = httpx.get(f"{served.http}/v1/jobs/{job['id']}/result", timeout=30)  # the job's own format: md
    assert md.status_code == 200 and md.headers["x-job-partial"] == "false"
    direct = httpx.post(served.http + "/v1/convert", content=pdf.read_bytes(),
                        params={"filename": pdf.name, "format": "md"}, timeout=60)
    assert direct.status_code == 200, direct.text
    assert md.text == direct.text and "Page 6. Plain prose of page 6" in md.text
    assert md.text.index("Page 1.") < md.text.index("Page 2.") < md.text.index("Page 6.")
    # the partial pages were final: identical to the same pages of the finished document
    final = httpx.get(f"{served.http}/v1/jobs/{job['id']}/result", params={"format": "json"}, timeout=30).json()
    for early, late in zip(partial.json()["pages"], final["pages"]):
        assert early["blocks"] == late["blocks"]


@SERVED
def test_unknown_ids_are_404_and_bad_options_422(served):
    for method, path in (("GET", "/v1/jobs/0123456789abcdef0123456789abcdef"), ("GET", "/v1/jobs/nope/result"),
                         ("DELETE", "/v1/jobs/..%2f..%2fetc")):
        r = httpx.request(method, served.http + path, timeout=30)
        assert r.status_code == 404 and r.json()["error"]["code"] == "not_found", (path, r.text)
    pdf = _pdf(served.d / "small.pdf", 1)
    r = httpx.post(served.http + "/v1/jobs", content=pdf.read_bytes(), params={"ocr": "sometimes"}, timeout=30)
    assert r.status_code == 422 and "ocr" in r.json()["error"]["message"], r.text
    before = sorted(served.jobs_dir.iterdir())
    big = httpx.post(served.http + "/v1/jobs", content=b"%PDF-1.7\n" + b"0" * 600_000, timeout=30)
    assert big.status_code == 413 and big.json()["error"]["code"] == "too_large", big.text
    assert sorted(served.jobs_dir.iterdir()) == before  # no job for it


@SERVED
def test_delete_cancels_and_the_stages_stop(served):
    pdf = _pdf(served.d / "slowjob-cancel.pdf", 14)
    r, _ = _submit(served, pdf)
    job_id = r.json()["id"]
    served.until(job_id, lambda s: s["pages_done"] >= 1, 30, "the first page")
    d = httpx.delete(f"{served.http}/v1/jobs/{job_id}", timeout=30)
    assert d.status_code == 200 and d.json()["state"] == "cancelled", d.text
    # the Triage walk stops: its call count stops growing, well short of the 14 pages
    last, since = -1, time.monotonic()
    while time.monotonic() - since < 2.0:
        n = len(served.triaged(pdf.name))
        if n != last:
            last, since = n, time.monotonic()
        time.sleep(0.2)
    status = served.status(job_id)
    assert status["state"] == "cancelled" and status["pages_done"] < 14 and last < 14, (status, last)
    assert httpx.get(f"{served.http}/v1/jobs/{job_id}/result", timeout=30).headers["x-job-partial"] == "true"


@SERVED
def test_beyond_max_queued_jobs_503_with_retry_after_and_the_typed_client(served):
    from pagerouter.clients.errors import PagerouterClientError
    from pagerouter.clients.http_client import PagerouterHttpClient
    from pagerouter.clients.retry_policy import RetryPolicy

    pdf = _pdf(served.d / "slowjob-queue.pdf", 3)
    with PagerouterHttpClient(served.http, timeout=30) as client:
        jobs = [client.submit_job(pdf) for _ in range(4)]  # serve.jobs.max_queued = 4
        # a client told not to retry sees the refusal itself (the default one waits it out, after Retry-After)
        with PagerouterHttpClient(served.http, timeout=30, retry=RetryPolicy(max_attempts=1)) as once, \
                pytest.raises(PagerouterClientError) as full:
            once.submit_job(pdf)
        assert full.value.status == 503 and full.value.code == "jobs_full", full.value
        assert full.value.retry_after_s == 1
        r = httpx.post(served.http + "/v1/jobs", content=pdf.read_bytes(), timeout=30)
        assert r.status_code == 503 and r.headers["retry-after"] == "1", r.text
        first = client.wait_job(jobs[0].id, poll_s=0.2, timeout=60)
        result = client.job_result(jobs[0].id)
        cancelled = [client.cancel_job(j.id).state for j in jobs[1:]]
    assert first.state == "done" and not result.partial and [p.number for p in result.document.pages] == [1, 2, 3]
    assert cancelled == ["cancelled"] * 3


@SERVED
def test_batch_killed_while_its_job_runs_reattaches_instead_of_resubmitting(served):
    import subprocess
    import sys

    pdf = _pdf(served.d / "slowjob-batch.pdf", 10)
    out = served.d / "batch-out"
    cmd = [sys.executable, "-m", "pagerouter.cli.main", "batch", str(pdf), "-o", str(out), "--endpoint", served.http,
           "--job-mb", "0.000001", "-q"]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    journal = out / "pagerouter-batch.journal.jsonl"

    def job_records():
        if not journal.exists():
            return []
        return [r for r in map(json.loads, filter(None, journal.read_text().splitlines())) if r.get("status") == "job"]

    first = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        (rec,) = wait_for(job_records, 60, "the batch to journal its job")
    finally:
        first.kill()  # SIGKILL: no cleanup, as a crash would
        first.wait(30)
    assert served.status(rec["job_id"])["state"] in ("queued", "running")  # the server kept it
    again = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr[-2000:]
    records = [json.loads(ln) for ln in journal.read_text().splitlines() if ln.strip()]
    done = [r for r in records if r.get("status") == "done"]
    assert len(job_records()) == 1 and len(done) == 1 and done[0]["job_id"] == rec["job_id"], records
    sources = [json.loads((p / "status.json").read_text())["source"] for p in served.jobs_dir.iterdir()
               if (p / "status.json").exists()]
    assert sum(s.endswith(pdf.name) for s in sources) == 1  # re-attached, never submitted twice
    md = (out / "slowjob-batch.md").read_text()
    assert [md.count(f"Page {n}. Plain prose") for n in range(1, 11)] == [1] * 10


@SERVED
def test_async_http_client_jobs(served):
    import asyncio

    from pagerouter.clients.http_client import AsyncPagerouterHttpClient

    pdf = _pdf(served.d / "async-job.pdf", 2)

    async def run():
        async with AsyncPagerouterHttpClient(served.http, timeout=30) as client:
            job = await client.submit_job(pdf, pages="2")
            for _ in range(300):
                if (await client.job(job.id)).finished:
                    break
                await asyncio.sleep(0.1)
            return await client.job_result(job.id), await client.cancel_job(job.id)

    result, after_cancel = asyncio.run(run())
    assert not result.partial and result.status.state == after_cancel.state == "done"  # a done job stays done
    assert [p.number for p in result.document.pages] == [2] and result.status.pages_total == 1
    assert any("Page 2. Plain prose" in b.text for b in result.document.pages[0].blocks)


@SERVED
def test_client_job_commands_over_grpc(served, capsys):
    from pagerouter.cli.main import main

    pdf = _pdf(served.d / "cli-job.pdf", 2)
    where = ["--grpc", served.grpc]
    assert main(["client", "job", "submit", str(pdf), *where]) == 0
    job_id = capsys.readouterr().out.strip()
    assert main(["client", "job", "wait", job_id, *where, "--poll-s", "0.2", "--timeout", "60"]) == 0
    assert json.loads(capsys.readouterr().out)["state"] == "done"
    assert main(["client", "job", "result", job_id, *where]) == 0
    md = capsys.readouterr().out
    assert md.index("Page 1. Plain prose of page 1") < md.index("Page 2. Plain prose of page 2")
    assert main(["client", "job", "status", "0" * 32, *where]) == 2
    err = capsys.readouterr().err
    assert err.startswith("pagerouter: error: not_found: ") and "0" * 32 in err and err.count("\n") == 1, err


@SERVED
def test_grpc_submit_survives_the_channel_closing_then_get_and_result(served):
    pdf = _pdf(served.d / "slowjob-grpc.pdf", 3)
    with grpc.insecure_channel(served.grpc) as channel:
        reply = pb_grpc.PageRouterStub(channel).SubmitJob(
            pb.ConvertRequest(data=pdf.read_bytes(), filename=pdf.name), timeout=30)
    job_id = reply.job.id
    assert reply.job.state in ("queued", "running") and len(job_id) == 32
    with grpc.insecure_channel(served.grpc) as channel:  # a new connection, later
        stub = pb_grpc.PageRouterStub(channel)
        wait_for(lambda: stub.GetJob(pb.JobRequest(job_id=job_id), timeout=30).job.state == "done", 60,
                 "the gRPC job to finish", interval=0.2)
        status = stub.GetJob(pb.JobRequest(job_id=job_id), timeout=30).job
        result = stub.GetJobResult(pb.JobRequest(job_id=job_id), timeout=30)
        with pytest.raises(grpc.RpcError) as missing:
            stub.GetJob(pb.JobRequest(job_id="f" * 32), timeout=30)
    assert status.pages_done == 3 and status.pages_total == 3 and dict(status.pages_by_route) == {"text_layer": 3}
    assert not result.partial and [p.number for p in result.document.pages] == [1, 2, 3]
    texts = [" ".join(b.text for b in p.blocks) for p in result.document.pages]
    assert all(f"Page {n}. Plain prose of page {n}" in t for n, t in zip((1, 2, 3), texts)), texts
    assert missing.value.code() == grpc.StatusCode.NOT_FOUND and "f" * 32 in missing.value.details()


@SERVED
def test_sigkilled_ingress_replica_job_is_resumed_with_every_page_once(served):
    import psutil

    pdf = _pdf(served.d / "slowjob-kill.pdf", 8)
    r, _ = _submit(served, pdf)
    job_id = r.json()["id"]
    running = served.until(job_id, lambda s: s["pages_done"] >= 2 and s["owner"], 30, "two pages done")
    pid = int(running["owner"].split(":")[1])
    assert served.proc.pid in {p.pid for p in psutil.Process(pid).parents()}, "not this module's replica"
    os.kill(pid, signal.SIGKILL)
    pages_file = served.jobs_dir / job_id / "pages.jsonl"
    before = {json.loads(ln)["number"] for ln in pages_file.read_text().splitlines() if ln.strip()}
    t0 = time.monotonic()
    # Watch the status file, not the API: no request may be what wakes the restarted replica's scan.
    status_file = served.jobs_dir / job_id / "status.json"
    done = wait_for(lambda: (s := json.loads(status_file.read_text()))["state"] in ("done", "failed", "cancelled")
                    and s, 90, "the resumed job", interval=0.1)
    took = time.monotonic() - t0
    lines = [json.loads(ln) for ln in pages_file.read_text().splitlines() if ln.strip()]
    numbers = [p["number"] for p in lines]
    walked = served.triaged(pdf.name)
    print(f"\nSIGKILL of the Ingress replica (pid {pid}) running an 8-page job after {len(before)} pages: "
          f"resumed by {done['owner'] or 'a new replica'} and done {took:.1f} s later, runs={done['runs']}, "
          f"page lines {numbers}")
    assert done["state"] == "done" and done["runs"] == 2 and done["pages_done"] == 8, done
    assert sorted(numbers) == list(range(1, 9)) and len(numbers) == 8  # every page exactly once
    for n in before:  # pages finished before the kill were not read again
        assert sum(1 for page, _ in walked if page == n) == 1, (n, walked)
    result = httpx.get(f"{served.http}/v1/jobs/{job_id}/result", params={"format": "md"}, timeout=30).text
    assert [result.count(f"Page {n}. Plain prose") for n in range(1, 9)] == [1] * 8
