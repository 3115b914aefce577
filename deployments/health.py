"""Readiness of the whole graph, the effective config as Serve runs it, and the stages' health hooks.

`/healthz` (and the gRPC front's Healthz) must say whether a request can be served *now*:
the Ingress answering proves only itself. `Readiness.check()` gathers two views and
`pagerouter.service.readiness` turns them into the report:

- the controller's (`get_serve_instance_details`: each deployment's status, replicas and
  their states, required resources), which is authoritative but learns of a dead replica only
  at its next health check (Serve's `health_check_period_s`, 10 s by default);
- a live ping of each stage (`ready()`, a trivial method, bounded by `PING_TIMEOUT_S`), which
  fails as soon as the replica's process is gone.

The check never runs a conversion and is cached for `CACHE_S` so probes stay cheap.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from pagerouter.service.applied_settings import applied_settings
from pagerouter.service.readiness import BUSY, PING_TIMEOUT_S, graph_report, has_running_replica, stages_to_ping

CACHE_S = 2.0
CONTROLLER_TIMEOUT_S = 3.0
ACTOR_CHECK_TIMEOUT_S = 1.0  # a live replica actor answers __ray_ready__ from its event loop

def _controller():
    import ray
    from ray.serve._private.constants import SERVE_CONTROLLER_NAME, SERVE_NAMESPACE

    return ray.get_actor(SERVE_CONTROLLER_NAME, namespace=SERVE_NAMESPACE)


def _node_resources() -> list[dict[str, float]]:
    import ray

    return [n.get("Resources") or {} for n in ray.nodes() if n.get("Alive")]


def current_app_name(default: str) -> str:
    try:
        from ray import serve

        return serve.get_replica_context().app_name
    except Exception:  # noqa: BLE001 - outside a replica (local testing mode)
        return default


class Readiness:
    """Cached readiness of one application: `await check()` -> (ready, body)."""

    def __init__(self, handles: dict[str, Any], app_name: str, version: str):
        self.handles, self.default_app, self.version = handles, app_name, version
        self._cached: tuple[float, bool, dict] | None = None
        self._lock = asyncio.Lock()
        self._controller = None

    async def check(self) -> tuple[bool, dict]:
        async with self._lock:  # concurrent probes share one check
            if self._cached and time.monotonic() - self._cached[0] < CACHE_S:
                return self._cached[1], self._cached[2]
            ready, body = await self._check()
            self._cached = (time.monotonic(), ready, body)
            return ready, body

    async def details(self) -> tuple[dict | None, str | None]:
        """(this application's details from the controller, or None and why)."""
        app = current_app_name(self.default_app)
        import ray

        if not ray.is_initialized():  # Serve's local testing mode: no controller to ask (never start Ray here)
            return None, "no Serve controller (local testing mode)"
        try:
            if self._controller is None:
                self._controller = await asyncio.to_thread(_controller)
            details = await asyncio.wait_for(
                self._controller.get_serve_instance_details.remote(), CONTROLLER_TIMEOUT_S
            )
        except Exception as exc:  # noqa: BLE001 - reported in the body
            self._controller = None
            return None, f"the Serve controller did not answer: {type(exc).__name__}"
        found = (details.get("applications") or {}).get(app)
        return found, None if found else f"the Serve controller does not list application {app!r}"

    async def ping(self, name: str) -> str:
        response = self.handles[name].ready.remote()
        try:
            await asyncio.wait_for(_result(response), PING_TIMEOUT_S)
            return "ok"
        except asyncio.TimeoutError:
            # A replica busy with max_ongoing_requests pages queues the ping behind them: that is
            # load, not death (a dead process fails the call at once, below; a hung one fails
            # Serve's own check_health and is replaced). Under a load test /healthz must stay 200.
            _cancel(response)
            return BUSY
        except Exception as exc:  # noqa: BLE001 - e.g. ActorDiedError: the process is gone
            from ray.serve.exceptions import BackPressureError

            _cancel(response)
            if isinstance(exc, BackPressureError):  # its queue is full: busy, not dead
                return BUSY
            return f"ping failed: {type(exc).__name__}"

    async def _check(self) -> tuple[bool, dict]:
        app, problem = await self.details()
        deps = (app or {}).get("deployments") or {}
        try:
            nodes = await asyncio.to_thread(_node_resources) if app is not None else None
        except Exception:  # noqa: BLE001 - schedulability then stays unknown
            nodes = None
        names = stages_to_ping(app)
        pings = dict(zip(names, await asyncio.gather(*(self.ping(n) for n in names))))
        for name in [n for n in names if pings[n] == BUSY and app is not None]:
            if await replicas_dead((deps.get(name) or {}).get("replicas") or []):
                pings[name] = "ping failed: the process of every running replica is dead"
        return graph_report(app, problem, pings, nodes, self.version, current_app_name(self.default_app))


async def replicas_dead(replicas: list[dict]) -> bool:
    """Whether every replica the controller lists as RUNNING is a dead process.

    A ping that times out is normally load (`busy`). But Serve's handle also holds a request
    for a replica that was just SIGKILLed until the controller notices, so a dead stage can look
    busy until its replacement is up and /healthz never says 503. Asking each replica actor
    directly answers at once: a dead actor fails with RayActorError, a live one (busy in its
    worker threads) answers from its event loop; no answer in time counts as alive."""
    import ray
    from ray.exceptions import RayActorError

    names = [r["actor_name"] for r in replicas if r.get("state") == "RUNNING" and r.get("actor_name")]

    async def dead(name: str) -> bool:
        try:
            actor = await asyncio.to_thread(ray.get_actor, name, "serve")
        except ValueError:  # no such actor any more
            return True
        try:
            await asyncio.wait_for(actor.__ray_ready__.remote(), ACTOR_CHECK_TIMEOUT_S)
        except RayActorError:
            return True
        except Exception:  # noqa: BLE001 - a timeout or anything else: not proven dead
            return False
        return False

    return bool(names) and all(await asyncio.gather(*(dead(n) for n in names)))


def _cancel(response) -> None:
    """Best effort: Ray 2.60's cancel() from outside the replica re-raises the call's own error."""
    try:
        response.cancel()
    except Exception:  # noqa: BLE001 - the call already ended with that error
        pass


async def _result(response):
    return await response


async def applied_config(readiness: Readiness) -> dict[str, Any]:
    """Per deployment, the settings Serve runs it with, read from the controller now."""
    app, problem = await readiness.details()
    if app is None:
        return {"error": problem}
    from ray.serve._private.config import DeploymentConfig

    deps, defaults = app.get("deployments") or {}, DeploymentConfig()
    out = {name: applied_settings(dep, defaults) for name, dep in sorted(deps.items())}
    for name in ("Layout", "SmallReader"):  # batch settings live in the replica: ask one
        if name in out and name in readiness.handles and has_running_replica(deps[name]):
            try:
                reply = await asyncio.wait_for(_result(readiness.handles[name].ready.remote()), PING_TIMEOUT_S)
                out[name]["batching"] = reply.get("batching")
            except Exception as exc:  # noqa: BLE001 - shown instead of the figures
                out[name]["batching"] = {"error": f"no replica answered: {type(exc).__name__}"}
    return out


# ---------------------------------------------------------------------------- Serve's hooks in the stages
def stage_ready(role: str, **extra: Any) -> dict[str, Any]:
    """A stage's answer to the readiness ping (cheap: no engine call)."""
    return {"deployment": role, "ok": True, **extra}


def check_page_work(pages) -> None:
    """Serve's check_health for Triage: a replica whose isolation pool was closed cannot serve
    (raising makes Serve replace it). `_closed` is the pool's own flag (pagerouter.isolation.pool)."""
    if getattr(pages, "_closed", False):
        raise RuntimeError("the page-work pool of this replica is closed")


async def check_batch_loop(batched_method) -> None:
    """Serve's check_health for a batched stage: its batch loop task must be alive, or every page
    sent to this replica would wait forever."""
    alive = getattr(batched_method, "_is_batching_task_alive", None)
    if alive is not None and not await alive():
        raise RuntimeError("the batch loop of this replica has stopped")
