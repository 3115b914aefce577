"""Fake pagerouter servers for the client tests (HTTP and gRPC): no Ray, no converter.

They speak the real API's shapes (errors as `{"error": {...}}` + Retry-After, gRPC statuses with
`error-code` / `retry-after` trailers as pagerouter/service/error_status.py sets them) and answer a
fixed one-page document per file, whose only text is `text of NAME`. A plan refuses the first
calls of each file on each route; every arrival is logged with its monotonic time, so a test can
check how long the client waited before it came back. `extra=True` adds fields no client knows
at document, page and block level (and to job statuses), as a newer server would.
"""

from __future__ import annotations

import json
import threading
import time
from collections import defaultdict
from concurrent import futures
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

import grpc

from pagerouter.jobs import JobStatus
from pagerouter.model import Block, Document, Page
from pagerouter.wire import proto_model
from pagerouter.wire.protos import pagerouter_pb2 as pb
from pagerouter.wire.protos import pagerouter_pb2_grpc as pb_grpc

# (status, error code, Retry-After header or None); over gRPC the status is a grpc.StatusCode.
Refusal = tuple[object, str, str | None]
NEW_FIELD = {"added_by_a_newer_server": {"nested": [1, 2]}}


def document(name: str) -> Document:
    block = Block(text=f"text of {name}", role="paragraph", bbox=(10, 10, 200, 30), page=1, engine="fake",
                  route="text_layer", confidence=1.0)
    page = Page(number=1, status="ok", route="text_layer", width=300, height=400, blocks=[block])
    return Document(source=name, page_count=1, pages=[page], engines={"fake": "0"})


def job_status(name: str, state: str) -> JobStatus:
    now = time.time()
    done = state == "done"
    return JobStatus(id=f"{abs(hash(name)) % 10**32:032d}", source=name, state=state, pages_total=1,
                     pages_done=int(done), created_at=now, updated_at=now, finished_at=now if done else None)


def with_new_fields(obj: dict, levels: tuple[str, ...] = ("document", "page", "block")) -> dict:
    """The document JSON as a newer server might send it: an unknown field at each level."""
    obj = {**obj, **NEW_FIELD} if "document" in levels else dict(obj)
    obj["pages"] = [
        {**({**p, **NEW_FIELD} if "page" in levels else p),
         "blocks": [{**b, **NEW_FIELD} if "block" in levels else b for b in p["blocks"]]}
        for p in obj.get("pages", [])
    ]
    return obj


@dataclass
class Plan:
    """Refusals per route (`POST /v1/convert`, `GET /v1/jobs`, or a gRPC method name), given to each
    file in order before it is served; the log of every arrival (route, file, time, answered status)."""

    refusals: dict[str, list[Refusal]] = field(default_factory=dict)
    extra: bool = False
    log: list[tuple[str, str, float, object]] = field(default_factory=list)
    _seen: dict[tuple[str, str], int] = field(default_factory=lambda: defaultdict(int))
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def arrive(self, route: str, name: str) -> Refusal | None:
        """The refusal this arrival gets, or None to serve it; logs the arrival."""
        with self._lock:
            n = self._seen[(route, name)]
            self._seen[(route, name)] = n + 1
            plan = self.refusals.get(route, [])
            refusal = plan[n] if n < len(plan) else None
            self.log.append((route, name, time.monotonic(), refusal[0] if refusal else "ok"))
            return refusal

    def arrivals(self, route: str, name: str) -> list[float]:
        return [t for r, n, t, _ in self.log if r == route and n == name]


# ------------------------------------------------------------------------------------------ HTTP
class _Handler(BaseHTTPRequestHandler):
    plan: Plan
    jobs: dict[str, str]  # job id -> file name
    polls: dict[str, int]

    def log_message(self, *args) -> None:  # keep pytest's output clean
        pass

    def _send(self, status: int, body: bytes, ctype: str = "application/json", headers: dict | None = None):
        self.send_response(status)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(body)))
        self.send_header("x-request-id", "fake-request")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, obj, headers: dict | None = None):
        self._send(status, json.dumps(obj).encode(), headers=headers)

    def _refused(self, route: str, name: str) -> bool:
        refusal = self.plan.arrive(route, name)
        if refusal is None:
            return False
        status, code, retry_after = refusal
        self._json(status, {"error": {"code": code, "message": f"fake server refuses ({code}); retry later",
                                      "request_id": "fake-request"}},
                   {"Retry-After": retry_after} if retry_after is not None else None)
        return True

    def _doc(self, name: str) -> dict:
        obj = document(name).model_dump(mode="json")
        return with_new_fields(obj) if self.plan.extra else obj

    def _status(self, name: str, state: str) -> dict:
        obj = job_status(name, state).public()
        return {**obj, **NEW_FIELD} if self.plan.extra else obj

    def do_POST(self):
        url = urlparse(self.path)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        self.rfile.read(int(self.headers.get("content-length") or 0))
        name = query.get("filename", "-")
        route = f"POST {url.path}" + (" stream" if query.get("stream") == "true" else "")
        if self._refused(route, name):
            return
        if url.path == "/v1/convert" and query.get("stream") == "true":
            doc = self._doc(name)
            lines = [{"type": "page", "page": p} for p in doc["pages"]]
            lines.append({"type": "document", "document": {**doc, "pages": []}})
            self._send(200, "".join(json.dumps(x) + "\n" for x in lines).encode(), "application/x-ndjson")
        elif url.path == "/v1/convert":
            self._json(200, self._doc(name))
        elif url.path == "/v1/jobs":
            status = job_status(name, "queued")
            self.jobs[status.id] = name
            self._json(202, self._status(name, "queued"))
        else:
            self._json(404, {"error": {"code": "not_found", "message": url.path}})

    def do_GET(self):
        url = urlparse(self.path)
        parts = url.path.strip("/").split("/")  # v1 jobs ID [result]
        if parts[:2] != ["v1", "jobs"] or len(parts) < 3 or parts[2] not in self.jobs:
            return self._json(404, {"error": {"code": "not_found", "message": url.path}})
        name = self.jobs[parts[2]]
        if len(parts) == 4:
            if not self._refused("GET /v1/jobs/result", name):
                self._json(200, self._doc(name), {"x-job-partial": "false"})
            return
        if self._refused("GET /v1/jobs", name):
            return
        self.polls[name] = self.polls.get(name, 0) + 1
        self._json(200, self._status(name, "running" if self.polls[name] < 2 else "done"))


class FakeBusyHttpServer:
    """`with FakeBusyHttpServer(plan) as url:` a fake pagerouter HTTP API on 127.0.0.1 (a thread)."""

    def __init__(self, plan: Plan):
        handler = type("Handler", (_Handler,), {"plan": plan, "jobs": {}, "polls": {}})
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)


# ------------------------------------------------------------------------------------------ gRPC
class FakeBusyServicer(pb_grpc.PageRouterServicer):
    """The gRPC API's conversions and jobs, refusing as the plan says (status + trailers)."""

    def __init__(self, plan: Plan):
        self.plan, self.jobs, self.polls = plan, {}, defaultdict(int)

    def _refuse(self, method: str, name: str, context) -> None:
        refusal = self.plan.arrive(method, name)
        if refusal is None:
            return
        status, code, retry_after = refusal
        trailers = [("error-code", code)] + ([("retry-after", retry_after)] if retry_after is not None else [])
        context.set_trailing_metadata(tuple(trailers))
        context.abort(status, f"fake server refuses ({code}); retry later")

    def ConvertDocument(self, request, context):
        self._refuse("ConvertDocument", request.filename, context)
        return pb.DocumentReply(document=proto_model.document_to_proto(document(request.filename)),
                                request_id="fake-request")

    def StreamDocument(self, request, context):
        self._refuse("StreamDocument", request.filename, context)
        doc = document(request.filename)
        for p in doc.pages:
            yield pb.StreamReply(page=proto_model.page_to_proto(p), request_id="fake-request")
        yield pb.StreamReply(summary=proto_model.document_to_proto(doc.model_copy(update={"pages": []})),
                             request_id="fake-request")

    def SubmitJob(self, request, context):
        self._refuse("SubmitJob", request.filename, context)
        status = job_status(request.filename, "queued")
        self.jobs[status.id] = request.filename
        return pb.JobReply(job=_status_proto(status), request_id="fake-request")

    def GetJob(self, request, context):
        name = self.jobs[request.job_id]
        self._refuse("GetJob", name, context)
        self.polls[name] += 1
        return pb.JobReply(job=_status_proto(job_status(name, "running" if self.polls[name] < 2 else "done")))

    def GetJobResult(self, request, context):
        name = self.jobs[request.job_id]
        self._refuse("GetJobResult", name, context)
        return pb.JobResultReply(document=proto_model.document_to_proto(document(name)), partial=False,
                                 job=_status_proto(job_status(name, "done")))


def _status_proto(s: JobStatus) -> pb.JobStatus:
    msg = pb.JobStatus(id=s.id, source=s.source, state=s.state, pages_done=s.pages_done,
                       created_at=s.created_at, updated_at=s.updated_at, runs=s.runs)
    if s.pages_total is not None:
        msg.pages_total = s.pages_total
    if s.finished_at is not None:
        msg.finished_at = s.finished_at
    return msg


class FakeBusyGrpcServer:
    """`with FakeBusyGrpcServer(plan) as target:` a fake pagerouter gRPC API on 127.0.0.1."""

    def __init__(self, plan: Plan):
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
        pb_grpc.add_PageRouterServicer_to_server(FakeBusyServicer(plan), self.server)
        self.port = self.server.add_insecure_port("127.0.0.1:0")

    def __enter__(self) -> str:
        self.server.start()
        return f"127.0.0.1:{self.port}"

    def __exit__(self, *exc) -> None:
        self.server.stop(0).wait(5)
