"""The gRPC methods of the ingress (a mixin of `pagerouter.deployments.ingress.IngressCore`).

Serve's gRPC proxy (under `serve run`) calls `ConvertDocument`, `StreamDocument` and
`ConvertPage` by name; `pagerouter serve`'s own front (graph/grpc_front.py) calls them through
`grpc_unary` / `grpc_stream` with the serialized request and the caller's metadata. Both paths
end in the same conversion as HTTP (`IngressCore.collect` / `convert_items`).
"""

# No `from __future__ import annotations`: Serve inspects the methods of the ingress class.

import asyncio
from collections.abc import AsyncIterator
from contextlib import aclosing

from pagerouter.flow.options import PageOptions, RequestOptions
from pagerouter.service.admission import Refused
from pagerouter.service.api_problems import single_page_problem
from pagerouter.service.delivery import grpc_stream_replies
from pagerouter.service.error_status import grpc_problem, grpc_refused
from pagerouter.service.grpc_auth import grpc_unauthenticated
from pagerouter.service.grpc_forwarding import RecordingContext, grpc_request_type
from pagerouter.service.request_options import grpc_request_options
from pagerouter.wire import proto_model
from pagerouter.wire.items import InputProblem
from pagerouter.wire.protos import pagerouter_pb2 as pb

from .observe import current_request_id


async def _after(first, rest: AsyncIterator) -> AsyncIterator:
    """`first`, then `rest` (closed with this generator: closing it cancels the walk)."""
    async with aclosing(rest):
        yield first
        async for item in rest:
            yield item


class GrpcMethods:
    """gRPC rpcs over the ingress's conversion (needs `collect`, `convert_items`, `_admit_grpc`,
    `_deadline`, `api_key` and `deadline_s` from the class it is mixed into)."""

    async def ConvertDocument(self, request: pb.ConvertRequest, grpc_context=None) -> pb.DocumentReply:
        rid = current_request_id()
        doc = await self._grpc_document(request, grpc_context, RequestOptions, lambda opts: opts.pages, known_pages=None)
        if doc is None:
            return pb.DocumentReply(request_id=rid)
        document = await asyncio.to_thread(proto_model.document_to_proto, doc)  # large: off the loop
        return pb.DocumentReply(document=document, request_id=rid)

    async def ConvertPage(self, request: pb.PageRequest, grpc_context=None) -> pb.PageReply:
        rid = current_request_id()
        # proto3: page 0 is "not set", documented as page 1; below 1 is refused by name, not read as a range
        problem = single_page_problem(request.page or 1, request.filename or "-")
        doc = await self._grpc_document(
            request, grpc_context, PageOptions, lambda opts: str(opts.page), problem, known_pages=1,
        )
        if doc is None:
            return pb.PageReply(request_id=rid)
        return pb.PageReply(page=proto_model.page_to_proto(doc.pages[0]), request_id=rid)

    async def _grpc_document(self, request, grpc_context, model, pages, problem: InputProblem | None = None,
                             known_pages: int | None = None):
        """The converted document of a unary rpc, or None with the call's status set: no API key,
        `problem` (a bad page), refused admission (before the request is read, or once its page
        count is known: `known_pages` before that), bad options or input."""
        if grpc_unauthenticated(grpc_context, self.api_key):
            return None
        if problem is not None:
            grpc_problem(grpc_context, problem)
            return None
        release = self._admit_grpc(grpc_context, known_pages)
        if release is None:
            return None
        with release:
            opts = grpc_request_options(request, model)
            try:
                result = opts if isinstance(opts, InputProblem) else await self.collect(
                    request.data, request.filename or "-", opts.password, pages(opts), opts.wait,
                    opts.escalation_wait_s, options=opts, slot=release,
                )
            except Refused as exc:  # its page count, once the file was opened, would not finish in time
                grpc_refused(grpc_context, exc)
                return None
        if isinstance(result, InputProblem):
            grpc_problem(grpc_context, result)
            return None
        return result

    async def StreamDocument(self, request: pb.ConvertRequest, grpc_context=None) -> AsyncIterator[pb.StreamReply]:
        rid = current_request_id()
        # A refused call's status travels with one empty message: Serve applies a streaming call's
        # status only with a yielded message (clients skip a reply without `item`).
        if grpc_unauthenticated(grpc_context, self.api_key):
            yield pb.StreamReply(request_id=rid)
            return
        deadline, release = self._deadline(), self._admit_grpc(grpc_context)
        if release is None:
            yield pb.StreamReply(request_id=rid)
            return
        with release:
            opts = grpc_request_options(request, RequestOptions)
            if isinstance(opts, InputProblem):
                grpc_problem(grpc_context, opts)
                yield pb.StreamReply(request_id=rid)
                return
            name = request.filename or "-"
            items = self.convert_items(
                request.data, name, opts.password, opts.pages, opts.wait, opts.escalation_wait_s, options=opts,
                slot=release,
            )
            try:  # the head first: a refusal once the page count is known is the call's status, not INTERNAL
                head = await items.__anext__()
            except Refused as exc:
                await items.aclose()
                grpc_refused(grpc_context, exc)
                yield pb.StreamReply(request_id=rid)
                return
            items = _after(head, items)
            replies = grpc_stream_replies(items, name, grpc_context, rid, deadline, self.deadline_s)
            async with aclosing(replies):
                async for reply in replies:
                    yield reply

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
