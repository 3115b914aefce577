"""How the jobs API answers: a job's status as a gRPC message, the headers of its result."""

from __future__ import annotations

from pagerouter.jobs import JobStatus
from pagerouter.wire.protos import pagerouter_pb2 as pb


def status_to_proto(s: JobStatus) -> pb.JobStatus:
    msg = pb.JobStatus(
        id=s.id, source=s.source, state=s.state, pages_done=s.pages_done, errors=s.errors,
        created_at=s.created_at, updated_at=s.updated_at, runs=s.runs, owner=s.owner or "",
    )
    msg.pages_by_route.update(s.pages_by_route)
    msg.pages_by_status.update(s.pages_by_status)
    for name in ("pages_total", "started_at", "finished_at"):
        if getattr(s, name) is not None:
            setattr(msg, name, getattr(s, name))
    return msg


def job_result_headers(status: JobStatus) -> dict[str, str]:
    """The headers of GET /v1/jobs/{id}/result: the job's state, whether the document is partial, pages done."""
    total = status.pages_total if status.pages_total is not None else "?"
    return {"X-Job-State": status.state, "X-Job-Partial": "false" if status.state == "done" else "true",
            "X-Job-Pages": f"{status.pages_done}/{total}"}
