"""The gRPC front of `pagerouter serve`: a gRPC server bound to serve.host:grpc_port.

Ray Serve 2.60's own gRPC proxy always listens on `[::]:port` (ray/serve/_private/grpc_util.py
builds the address; no option changes it), so `pagerouter serve` does not start it. This
server runs in the `pagerouter serve` process instead, on its own asyncio loop thread, binds
exactly the configured host, checks the API key (pagerouter/service/api_key.py), and forwards each
PageRouter call to the Ingress through a DeploymentHandle (`grpc_unary` / `grpc_stream`)
as raw bytes: no re-encoding here, replies stream through as the Ingress yields them.
It enforces `serve.request_timeout_s` (DEADLINE_EXCEEDED) and the upload limit (the receive
limit: RESOURCE_EXHAUSTED), cancels the Serve request when the caller goes away, and answers
Serve's built-in `ray.serve.RayServeAPIService` (Healthz without a key: the graph's readiness,
UNAVAILABLE naming what cannot serve; ListApplications).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import Any

import grpc

from pagerouter.service.api_key import UNAUTHORIZED_CODE, UNAUTHORIZED_MESSAGE, ApiKey, metadata_authorized
from pagerouter.service.client_identity import PEER_METADATA
from pagerouter.service.errors import internal_message
from pagerouter.service.grpc_forwarding import SERVICE

log = logging.getLogger("pagerouter.grpc_front")
_UPLOAD_OVERHEAD_BYTES = 64 * 1024  # the request's other fields around the file bytes
HEALTH_TIMEOUT_S = 10.0  # the Ingress's readiness check is bounded by ~5 s itself (deployments/health.py)


def grpc_address(host: str, port: int) -> str:
    """host:port for grpc's add_insecure_port (IPv6 literals in brackets)."""
    h = host.strip()
    if ":" in h and not h.startswith("["):
        h = f"[{h}]"
    return f"{h}:{port}"


def _status_of(exc: BaseException, timeout_s: float | None, retry_after_s: int = 5
               ) -> tuple[grpc.StatusCode, str, tuple[tuple[str, str], ...]]:
    """(status, details, trailing metadata) of a call that failed in Serve; a full queue says when
    to retry, as HTTP's 503 does with Retry-After."""
    from ray.serve.exceptions import BackPressureError

    if isinstance(exc, TimeoutError):
        return (grpc.StatusCode.DEADLINE_EXCEEDED, f"request timed out after {timeout_s:g} s (serve.request_timeout_s)",
                (("error-code", "timeout"),))
    if isinstance(exc, BackPressureError):
        return (grpc.StatusCode.UNAVAILABLE, "the server is at capacity; retry later",
                (("error-code", "overloaded"), ("retry-after", str(retry_after_s))))
    return grpc.StatusCode.INTERNAL, internal_message(exc), (("error-code", "internal"),)


def _cancel(response) -> None:
    """Cancel a Serve request, best effort. Ray 2.60's `cancel()` from outside a replica fetches the
    call's result first and re-raises its error (e.g. BackPressureError): swallowed here, or it
    would escape the handler and the caller would get UNKNOWN with Ray's text instead of our status."""
    try:
        response.cancel()
    except Exception:  # noqa: BLE001 - the call already ended with that error
        pass


class GrpcFront:
    """Start with `start()` (raises if the address cannot be bound), stop with `stop()`."""

    def __init__(self, handle, host: str, port: int, *, app_name: str, api_key: ApiKey | None,
                 request_timeout_s: float | None, max_upload_mb: float, retry_after_s: int = 5):
        """`handle`: the Ingress's DeploymentHandle, or a function returning it (called on the first
        forwarded call, so the front can listen before the application is deployed)."""
        self._handle_or_factory, self.address, self.app_name = handle, grpc_address(host, port), app_name
        self._handle = None if callable(handle) and not hasattr(handle, "remote") else handle
        self.api_key, self.timeout_s, self.retry_after_s = api_key, request_timeout_s, retry_after_s
        self.max_receive = int(max_upload_mb * 1024 * 1024) + _UPLOAD_OVERHEAD_BYTES
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: grpc.aio.Server | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._stopping: asyncio.Event | None = None
        self._grace_s = 5.0

    # ------------------------------------------------------------------ lifecycle
    def start(self, timeout_s: float = 30.0) -> None:
        self._thread = threading.Thread(target=self._run, name="pagerouter-grpc-front", daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout_s):
            raise RuntimeError(f"gRPC front on {self.address} did not start in {timeout_s:g} s")
        if self._error is not None:
            raise RuntimeError(f"gRPC front cannot listen on {self.address}: {self._error}") from self._error

    def stop(self, grace_s: float = 5.0) -> None:
        """Stop accepting calls, give running ones `grace_s`, then cancel them."""
        if self._loop is None or self._stopping is None or self._thread is None:
            return
        self._grace_s = grace_s
        try:
            self._loop.call_soon_threadsafe(self._stopping.set)
        except RuntimeError:  # the loop already ended
            pass
        self._thread.join(grace_s + 10)

    def _run(self) -> None:
        self._loop = asyncio.new_event_loop()
        try:
            self._loop.run_until_complete(self._serve())
        except BaseException as exc:  # noqa: BLE001 - reported to start()
            self._error = self._error or exc
            self._ready.set()
        finally:
            self._loop.close()

    async def _serve(self) -> None:
        server = grpc.aio.server(options=[
            ("grpc.max_receive_message_length", self.max_receive), ("grpc.max_send_message_length", -1),
            ("grpc.so_reuseport", 0),
        ])
        server.add_generic_rpc_handlers((self._page_router_handlers(), self._serve_api_handlers()))
        if server.add_insecure_port(self.address) == 0:  # older grpcio returns 0 instead of raising
            raise OSError(f"cannot bind {self.address}")
        self._stopping = asyncio.Event()
        await server.start()
        self._server = server
        self._ready.set()
        await self._stopping.wait()
        await server.stop(self._grace_s)

    # ------------------------------------------------------------------ handlers
    def _page_router_handlers(self) -> grpc.GenericRpcHandler:
        handlers: dict[str, Any] = {}
        for m in SERVICE.methods:
            if m.server_streaming:
                handlers[m.name] = grpc.unary_stream_rpc_method_handler(self._streaming(m.name))
            else:
                handlers[m.name] = grpc.unary_unary_rpc_method_handler(self._unary(m.name))
        return grpc.method_handlers_generic_handler(SERVICE.full_name, handlers)

    async def _forwarded_metadata(self, context) -> list[tuple[str, Any]]:
        """The caller's metadata without the key; aborts UNAUTHENTICATED when the key is wrong."""
        md = tuple(context.invocation_metadata() or ())
        if not metadata_authorized(self.api_key, md):
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, UNAUTHORIZED_MESSAGE,
                                (("error-code", UNAUTHORIZED_CODE),))
        # The caller's address for the ingress's per-client limit, from the connection (a caller's own
        # value under that name is dropped).
        kept = [(k, v) for k, v in md if k.lower() not in ("authorization", PEER_METADATA)]
        return [*kept, (PEER_METADATA, context.peer() or "")]

    async def _ingress(self, context):
        if self._handle is None:
            try:
                self._handle = await asyncio.to_thread(self._handle_or_factory)
            except Exception as exc:  # noqa: BLE001 - not deployed yet
                log.warning("gRPC front: no application handle yet: %s", internal_message(exc))
                await context.abort(grpc.StatusCode.UNAVAILABLE, "the server is still starting; retry shortly")
        return self._handle

    @staticmethod
    async def _finish(context, outcome) -> None:
        code, details, trailers = outcome
        if code is None:
            context.set_trailing_metadata(tuple(trailers))
            return
        await context.abort(getattr(grpc.StatusCode, code), details, tuple(trailers))

    def _unary(self, method: str):
        async def call(request: bytes, context) -> bytes:
            md = await self._forwarded_metadata(context)
            response = (await self._ingress(context)).grpc_unary.remote(method, request, md)

            async def result():
                return await response

            try:
                reply, outcome = await asyncio.wait_for(result(), self.timeout_s)
            except asyncio.CancelledError:  # the caller went away: stop the work it started
                _cancel(response)
                raise
            except Exception as exc:  # noqa: BLE001 - one status line, details in the server log
                _cancel(response)
                code, details, trailers = _status_of(exc, self.timeout_s, self.retry_after_s)
                log.warning("gRPC %s failed: %s", method, details)
                await context.abort(code, details, trailers)
            await self._finish(context, outcome)
            return reply

        return call

    def _streaming(self, method: str):
        async def call(request: bytes, context) -> None:
            md = await self._forwarded_metadata(context)
            replies = (await self._ingress(context)).options(stream=True).grpc_stream.remote(method, request, md)
            outcome = None
            try:
                async with asyncio.timeout(self.timeout_s):
                    async for item in replies:
                        if isinstance(item, bytes):
                            await context.write(item)
                        else:
                            outcome = item
            except asyncio.CancelledError:
                _cancel(replies)
                raise
            except Exception as exc:  # noqa: BLE001
                _cancel(replies)
                code, details, trailers = _status_of(exc, self.timeout_s, self.retry_after_s)
                log.warning("gRPC %s failed: %s", method, details)
                await context.abort(code, details, trailers)
            if outcome is None:
                await context.abort(grpc.StatusCode.INTERNAL, "the stream ended without a status")
            await self._finish(context, outcome)

        return call

    async def _readiness(self, context) -> tuple[bool, dict]:
        """The Ingress's readiness (ready, body); not ready when it does not answer in time."""
        response = (await self._ingress(context)).readiness.remote()

        async def result():
            return await response

        try:
            return await asyncio.wait_for(result(), HEALTH_TIMEOUT_S)
        except Exception as exc:  # noqa: BLE001 - the Ingress itself cannot answer
            _cancel(response)
            why = "did not answer in time" if isinstance(exc, TimeoutError) else internal_message(exc)
            return False, {"detail": f"cannot serve: Ingress {why}"}

    def _serve_api_handlers(self) -> grpc.GenericRpcHandler:
        """Serve's built-in health and listing service, as its own gRPC proxy answers it."""
        from ray.serve.generated import serve_pb2

        async def healthz(request, context):
            # Readiness of the whole graph, as /healthz answers it (deployments/health.py): no key
            # needed, UNAVAILABLE naming each deployment that cannot serve.
            ready, body = await self._readiness(context)
            if not ready:
                await context.abort(grpc.StatusCode.UNAVAILABLE, body.get("detail") or "the graph cannot serve")
            states = body.get("deployments") or {}
            degraded = [f"{n} {states[n]['state']}" for n in body.get("degraded") or ()]
            return serve_pb2.HealthzResponse(message="degraded: " + ", ".join(degraded) if degraded else "success")

        async def list_applications(request, context):
            await self._forwarded_metadata(context)
            return serve_pb2.ListApplicationsResponse(application_names=[self.app_name])

        def unary(fn, req):
            return grpc.unary_unary_rpc_method_handler(
                fn, request_deserializer=req.FromString, response_serializer=lambda m: m.SerializeToString()
            )

        return grpc.method_handlers_generic_handler("ray.serve.RayServeAPIService", {
            "Healthz": unary(healthz, serve_pb2.HealthzRequest),
            "ListApplications": unary(list_applications, serve_pb2.ListApplicationsRequest),
        })
