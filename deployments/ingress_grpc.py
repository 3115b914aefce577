"""The gRPC methods of the ingress (a mixin of `deployments.ingress.IngressCore`).

Serve's gRPC proxy (under `serve run`) calls `ConvertDocument`, `StreamDocument` and
`ConvertPage` by name; `pagerouter serve`'s own front (graph/grpc_front.py) calls them through
`grpc_unary` / `grpc_stream` with the serialized request and the caller's metadata. Both paths
end in the same conversion as HTTP (`IngressCore.collect` / `convert_items`).
"""

# No `from __future__ import annotations`: Serve inspects the methods of the ingress class.

import asyncio
from collections.abc import AsyncIterator
from contextlib import aclosing

import grpc

from pagerouter.model import Document, Page
from pagerouter.flow.options import PageOptions, RequestOptions
from pagerouter.wire import proto_model
from pagerouter.wire.items import DocumentHead, DocumentTail, InputProblem
from pagerouter.wire.protos import pagerouter_pb2 as pb

from .grpc_forward import RecordingContext, grpc_request_type
from .http_input import internal_message
from .ingress_support import _grpc_problem, _grpc_unauthenticated, _single_page_problem
from .limits import RequestTimeout, missing_pages_text, until_deadline
from .observe import current_request_id
from .options_api import grpc_request_options


class GrpcMethods:
    """gRPC rpcs over the ingress's conversion (needs `collect`, `convert_items`, `_admit_grpc`,
    `_admitted`, `_deadline`, `api_key` and `deadline_s` from the class it is mixed into)."""

    # ------------------------------------------------------------------ gRPC
    async def ConvertDocument(self, request: pb.ConvertRequest, grpc_context=None) -> pb.DocumentReply:
        rid = current_request_id()
        if _grpc_unauthenticated(grpc_context, self.api_key):
            return pb.DocumentReply(request_id=rid)
        release = self._admit_grpc(grpc_context)
        if release is None:
            return pb.DocumentReply(request_id=rid)
        with self._admitted(release):
            opts = grpc_request_options(request, RequestOptions)
            result = opts if isinstance(opts, InputProblem) else await self.collect(
                request.data, request.filename or "-", opts.password, opts.pages, opts.wait, opts.escalation_wait_s,
                options=opts,
            )
        if isinstance(result, InputProblem):
            _grpc_problem(grpc_context, result)
            return pb.DocumentReply(request_id=rid)
        document = await asyncio.to_thread(proto_model.document_to_proto, result)  # large: off the loop
        return pb.DocumentReply(document=document, request_id=rid)

    async def StreamDocument(self, request: pb.ConvertRequest, grpc_context=None) -> AsyncIterator[pb.StreamReply]:
        rid = current_request_id()
        if _grpc_unauthenticated(grpc_context, self.api_key):
            yield pb.StreamReply(request_id=rid)  # the status travels with a message (see below)
            return
        deadline, release = self._deadline(), self._admit_grpc(grpc_context)
        if release is None:
            yield pb.StreamReply(request_id=rid)
            return
        with self._admitted(release):
            async with aclosing(self._stream_grpc(request, grpc_context, rid, deadline)) as replies:
                async for reply in replies:
                    yield reply

    async def _stream_grpc(self, request, grpc_context, rid: str, deadline: float | None):
        """Ends with the summary, or with a status (DEADLINE_EXCEEDED, INTERNAL) naming the pages not delivered."""
        document: Document | None = None
        name, numbers, sent = request.filename or "-", [], set()
        opts = grpc_request_options(request, RequestOptions)
        if isinstance(opts, InputProblem):
            _grpc_problem(grpc_context, opts)
            yield pb.StreamReply(request_id=rid)  # the status travels with a message (see below)
            return
        items = self.convert_items(
            request.data, name, opts.password, opts.pages, opts.wait, opts.escalation_wait_s, options=opts,
        )
        async with aclosing(items):  # a cancelled call (client gone) closes it, which cancels Triage
            try:
                async for item in until_deadline(items, deadline, self.deadline_s):
                    if isinstance(item, InputProblem):
                        _grpc_problem(grpc_context, item)
                        # Serve applies a streaming call's status only with a yielded message: send
                        # one empty reply (no `item`), which clients skip; the call ends INVALID_ARGUMENT.
                        yield pb.StreamReply(request_id=rid)
                        return
                    if isinstance(item, DocumentHead):
                        document, numbers = item.document, item.numbers
                    elif isinstance(item, Page):
                        sent.add(item.number)
                        yield pb.StreamReply(page=proto_model.page_to_proto(item), request_id=rid)
                    elif isinstance(item, DocumentTail) and document is not None:
                        document.engines.update(item.engines)
                        yield pb.StreamReply(summary=proto_model.document_to_proto(document), request_id=rid)
                        return
                raise RuntimeError("the conversion ended without its closing summary")
            except Exception as exc:  # noqa: BLE001 - say which pages are missing, never end silently
                timeout = isinstance(exc, RequestTimeout)
                missing = missing_pages_text([n for n in numbers if n not in sent])
                why = str(exc) if timeout else internal_message(exc)
                problem = InputProblem(
                    "timeout" if timeout else "internal",
                    f"{name}: {why}" + (f"; pages not delivered: {missing}" if missing else ""), name,
                )
                _grpc_problem(grpc_context, problem)
                if grpc_context is not None and not timeout:
                    grpc_context.set_code(grpc.StatusCode.INTERNAL)
                yield pb.StreamReply(request_id=rid)

    async def ConvertPage(self, request: pb.PageRequest, grpc_context=None) -> pb.PageReply:
        rid = current_request_id()
        if _grpc_unauthenticated(grpc_context, self.api_key):
            return pb.PageReply(request_id=rid)
        number = request.page or 1  # proto3: 0 is "not set", documented as page 1
        name = request.filename or "-"
        problem = _single_page_problem(number, name)
        if problem is not None:
            _grpc_problem(grpc_context, problem)
            return pb.PageReply(request_id=rid)
        release = self._admit_grpc(grpc_context)
        if release is None:
            return pb.PageReply(request_id=rid)
        with self._admitted(release):
            opts = grpc_request_options(request, PageOptions)
            result = opts if isinstance(opts, InputProblem) else await self.collect(
                request.data, name, opts.password, str(opts.page), opts.wait, opts.escalation_wait_s, options=opts,
            )
        if isinstance(result, InputProblem):
            _grpc_problem(grpc_context, result)
            return pb.PageReply(request_id=rid)
        return pb.PageReply(page=proto_model.page_to_proto(result.pages[0]), request_id=rid)

    # ------------------------------------------------------------------ gRPC through a handle
    # `pagerouter serve` answers gRPC with its own front server (graph/grpc_front.py, bound to
    # serve.host) instead of Serve's proxy, which listens on all interfaces. The front forwards
    # each call here through a DeploymentHandle with the serialized request and the caller's
    # metadata; the status the method sets comes back with the reply.
    async def grpc_unary(self, method: str, request: bytes, metadata: list[tuple[str, str]]):
        """(serialized reply, (code name or None, details, trailing metadata)) of a unary rpc."""
        message = grpc_request_type(method, streaming=False).FromString(request)  # validates `method`
        ctx = RecordingContext(metadata, current_request_id())
        reply = await getattr(self, method)(message, ctx)
        return reply.SerializeToString(), ctx.outcome()

    async def grpc_stream(self, method: str, request: bytes, metadata: list[tuple[str, str]]):
        """Serialized replies of a server-streaming rpc, then its (code name, details, trailers)."""
        message = grpc_request_type(method, streaming=True).FromString(request)  # validates `method`
        ctx = RecordingContext(metadata, current_request_id())
        replies = getattr(self, method)(message, ctx)
        async with aclosing(replies):
            async for reply in replies:
                yield reply.SerializeToString()
        yield ctx.outcome()
