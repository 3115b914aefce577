"""A VLM engine that talks to an OpenAI-compatible server (vLLM's own `api_server`, a Ray
Serve LLM app, or any host speaking `/v1/chat/completions`) for deployments that run vLLM
elsewhere. The image goes inline as a PNG data URL; the API key is read from the environment
variable named in config (never from the config file itself).

Requests share one httpx client on a background loop: `max_connections` bounds how many are
in flight, and the server batches what arrives together.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import os
import threading
import time
from collections.abc import Iterator

from ..config.vlm import VlmEngineConfig
from .base import Generation, VlmRequest, png_bytes
from .loop import BackgroundLoop

log = logging.getLogger(__name__)


class OpenAiServerEngine:
    """Implements `pagerouter.vlm.base.VlmEngine` over HTTP."""

    name = "openai_server"

    def __init__(self, cfg: VlmEngineConfig):
        import httpx

        if not cfg.base_url:
            raise ValueError("vlm engine kind openai_server needs base_url")
        self.cfg = cfg
        self.url = cfg.base_url.rstrip("/") + "/chat/completions"
        key = os.environ.get(cfg.api_key_env, "")
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self._loop = BackgroundLoop("openai-engine-loop")
        timeout = httpx.Timeout(cfg.timeout_s, connect=cfg.connect_timeout_s)
        limits = httpx.Limits(max_connections=cfg.max_connections, max_keepalive_connections=cfg.max_connections)

        async def make_client():
            return httpx.AsyncClient(timeout=timeout, limits=limits, headers=headers)

        self._client = self._loop.call(make_client())
        self.version = f"openai_server {cfg.base_url} / {cfg.model_name()}"
        self._lock = threading.Lock()
        self._in_flight = 0
        self._max_in_flight = 0
        self._requests = 0
        self._errors = 0

    def _body(self, req: VlmRequest, stream: bool) -> dict:
        content: list[dict] = []
        if req.image is not None:
            url = "data:image/png;base64," + base64.b64encode(png_bytes(req.image)).decode("ascii")
            content.append({"type": "image_url", "image_url": {"url": url}})
        if req.prompt:  # an image-only request (LightOnOCR) has no text part at all
            content.append({"type": "text", "text": req.prompt})
        body = {
            "model": self.cfg.model_name(),
            "messages": [{"role": "user", "content": content}],
            "max_tokens": req.max_tokens,
            "temperature": req.temperature,
            "top_p": req.top_p,
            "stream": stream,
        }
        if req.stop:
            body["stop"] = list(req.stop)
        if req.logprobs and not stream:
            body["logprobs"] = True
        if req.seed is not None:
            body["seed"] = req.seed
        return body

    def _count(self, delta: int, error: bool = False) -> None:
        with self._lock:
            self._in_flight += delta
            self._max_in_flight = max(self._max_in_flight, self._in_flight)
            if delta > 0:
                self._requests += 1
            if error:
                self._errors += 1

    async def _generate_one(self, req: VlmRequest) -> Generation:
        t0 = time.perf_counter()
        self._count(+1)
        try:
            resp = await self._client.post(self.url, json=self._body(req, stream=False))
            if resp.status_code != 200:
                self._count(0, error=True)
                return Generation(
                    text="", finish_reason="error", seconds=time.perf_counter() - t0,
                    error=f"HTTP {resp.status_code} from {self.url}: {resp.text[:300]}",
                )
            data = resp.json()
        except Exception as exc:  # noqa: BLE001 - a timeout or refused connection is one failed attempt
            self._count(0, error=True)
            return Generation(text="", finish_reason="error", seconds=time.perf_counter() - t0, error=f"{type(exc).__name__}: {exc}"[:500])
        finally:
            self._count(-1)
        choice = (data.get("choices") or [{}])[0]
        usage = data.get("usage") or {}
        finish = choice.get("finish_reason") or "abort"
        return Generation(
            text=(choice.get("message") or {}).get("content") or "",
            finish_reason=finish if finish in ("stop", "length", "abort") else "stop",
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or 0),
            seconds=time.perf_counter() - t0,
            mean_logprob=_mean_logprob(choice.get("logprobs")),
            max_tokens=req.max_tokens,
            context_len=self.cfg.max_model_len,  # what the tier's config says the server's context is
        )

    def generate(self, requests: list[VlmRequest]) -> list[Generation]:
        if not requests:
            return []

        async def run():
            return list(await asyncio.gather(*(self._generate_one(r) for r in requests)))

        return self._loop.call(run())

    def stream(self, request: VlmRequest) -> Iterator[str]:
        """Text pieces from the server's server-sent events (`data: {...}` lines, `[DONE]`)."""

        async def pieces():
            async with self._client.stream("POST", self.url, json=self._body(request, stream=True)) as resp:
                if resp.status_code != 200:
                    raise RuntimeError(f"HTTP {resp.status_code} from {self.url}: {(await resp.aread())[:300]!r}")
                async for line in resp.aiter_lines():
                    if not line.startswith("data:"):
                        continue
                    payload = line[5:].strip()
                    if payload == "[DONE]":
                        return
                    delta = ((json.loads(payload).get("choices") or [{}])[0].get("delta") or {}).get("content")
                    if delta:
                        yield delta

        return self._loop.iterate(pieces)

    def stats(self) -> dict:
        with self._lock:
            return {"requests": self._requests, "errors": self._errors, "max_in_flight": self._max_in_flight}

    def close(self) -> None:
        client, self._client = getattr(self, "_client", None), None
        if client is not None:
            try:
                self._loop.call(client.aclose(), timeout=10)
            except Exception:  # noqa: BLE001 - closing; nothing to save
                pass
        self._loop.stop()


def _mean_logprob(logprobs: dict | None) -> float | None:
    items = (logprobs or {}).get("content") or []
    vals = [float(i["logprob"]) for i in items if isinstance(i, dict) and i.get("logprob") is not None]
    vals = [v for v in vals if v > -1e9]
    return sum(vals) / len(vals) if vals else None
