"""A conversion's items delivered to its caller, and nothing lost on the way.

The items are DocumentHead (or InputProblem and stop), every Page in page order, DocumentTail
(the ingress's `convert_items`). They reach the caller whole (`collect_document`), as NDJSON
lines (`ndjson_lines`) or as gRPC stream replies (`grpc_stream_replies`); each form ends with
the document or with an error that names the pages not delivered, the request's own deadline
included (`deadline.until_deadline`). The item stream is closed here, which cancels the work
still running for it (a client gone, a deadline passed).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import aclosing

import grpc

from pagerouter.intake.inputs import pages_text as missing_pages_text
from pagerouter.model import Document, Page
from pagerouter.wire import proto_model
from pagerouter.wire.items import DocumentHead, DocumentTail, InputProblem
from pagerouter.wire.protos import pagerouter_pb2 as pb

from .deadline import RequestTimeout, until_deadline
from .error_status import grpc_problem
from .errors import error_body, internal_message


async def collect_document(items: AsyncIterator, name: str, deadline: float | None,
                           seconds: float | None) -> Document | InputProblem:
    """The whole document, or the InputProblem that stopped it (`timeout` past `deadline`)."""
    doc: Document | None = None
    numbers: list[int] = []
    async with aclosing(items):
        try:
            async for item in until_deadline(items, deadline, seconds):
                if isinstance(item, InputProblem):
                    return item
                if isinstance(item, DocumentHead):
                    doc, numbers = item.document, item.numbers
                elif isinstance(item, Page):
                    doc.pages.append(item)  # type: ignore[union-attr]
                elif isinstance(item, DocumentTail):
                    doc.engines.update(item.engines)  # type: ignore[union-attr]
        except RequestTimeout as exc:
            done = {p.number for p in doc.pages} if doc is not None else set()
            left = missing_pages_text([n for n in numbers if n not in done])
            msg = f"{name}: {exc}" + (f"; pages not converted: {left}" if left else "")
            return InputProblem("timeout", msg, name, None, str(exc))
    return doc  # type: ignore[return-value]


async def ndjson_lines(items: AsyncIterator, head: DocumentHead, name: str, request_id: str, deadline: float | None,
                       seconds: float | None, release: Callable[[], None] | None = None) -> AsyncIterator[bytes]:
    """One `page` line per page after `head` (already read from `items`), then the `document`
    line, or an `error` line (the one error shape plus `missing_pages`). `release` (an admission
    slot) is called when the lines end, however they end."""
    document, sent = head.document, set()
    # Always ends with the `document` line or an error line naming the pages not delivered.
    # aclosing: a client that hangs up mid-stream closes `items`, which cancels the walk.
    try:
        async with aclosing(items):
            async for item in until_deadline(items, deadline, seconds):
                if isinstance(item, Page):
                    sent.add(item.number)
                    yield b'{"type":"page","page":' + item.model_dump_json().encode() + b"}\n"
                elif isinstance(item, DocumentTail):
                    document.engines.update(item.engines)
                    yield b'{"type":"document","document":' + document.model_dump_json().encode() + b"}\n"
                    return
        raise RuntimeError("the conversion ended without its closing summary")
    except Exception as exc:  # noqa: BLE001 - headers are gone: report in-band, same shape
        missing = [n for n in head.numbers if n not in sent]
        code, why = ("timeout", str(exc)) if isinstance(exc, RequestTimeout) else ("internal", internal_message(exc))
        text = f"{name}: {why}" + (f"; pages not delivered: {missing_pages_text(missing)}" if missing else "")
        error = error_body(code, text, request_id)
        yield (json.dumps({"type": "error", **error, "missing_pages": missing}) + "\n").encode()
    finally:
        if release is not None:
            release()


async def grpc_stream_replies(items: AsyncIterator, name: str, grpc_context, request_id: str, deadline: float | None,
                              seconds: float | None) -> AsyncIterator[pb.StreamReply]:
    """StreamDocument's replies: one per page, then the summary; or a status (INVALID_ARGUMENT,
    DEADLINE_EXCEEDED, INTERNAL) naming the pages not delivered, set on `grpc_context`."""
    document: Document | None = None
    numbers: list[int] = []
    sent: set[int] = set()
    async with aclosing(items):  # a cancelled call (client gone) closes it, which cancels the walk
        try:
            async for item in until_deadline(items, deadline, seconds):
                if isinstance(item, InputProblem):
                    grpc_problem(grpc_context, item)
                    # Serve applies a streaming call's status only with a yielded message: send
                    # one empty reply (no `item`), which clients skip; the call ends INVALID_ARGUMENT.
                    yield pb.StreamReply(request_id=request_id)
                    return
                if isinstance(item, DocumentHead):
                    document, numbers = item.document, item.numbers
                elif isinstance(item, Page):
                    sent.add(item.number)
                    yield pb.StreamReply(page=proto_model.page_to_proto(item), request_id=request_id)
                elif isinstance(item, DocumentTail) and document is not None:
                    document.engines.update(item.engines)
                    yield pb.StreamReply(summary=proto_model.document_to_proto(document), request_id=request_id)
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
            grpc_problem(grpc_context, problem)
            if grpc_context is not None and not timeout:
                grpc_context.set_code(grpc.StatusCode.INTERNAL)
            yield pb.StreamReply(request_id=request_id)
