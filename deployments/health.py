"""Readiness of the whole graph, and the effective config as Serve really runs it.

`/healthz` (and the gRPC front's Healthz) must say whether a request can be served *now*:
the Ingress answering proves only itself. `Readiness.check()` combines two views:

- the controller's (`get_serve_instance_details`: each deployment's status, replicas and
  their states, required resources), which is authoritative but learns of a dead replica only
  at its next health check (Serve's `health_check_period_s`, 10 s by default);
- a live ping of each stage (`ready()`, a trivial method, bounded by `PING_TIMEOUT_S`), which
  fails as soon as the replica's process is gone.

Triage, Layout and SmallReader must each have a running replica that answers; the Ingress is
answering this very request. LargeReader (the escalation tier) may legitimately sit at zero
replicas: calls to it queue while it wakes. If its replicas cannot be placed on any node of the
cluster (e.g. it asks for a GPU the cluster lacks) the answer is still 200 but `degraded`, because
the graph does serve every page: flagged pages keep their first reading after the bounded
escalation wait (pagerouter.flow.pipeline.ocr_flow). Pulling the only server out of a load balancer
for an optional tier would turn degraded service into none; the body says which tier is missing.

The check never runs a conversion and is cached for `CACHE_S` so probes stay cheap.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

STAGES = ("Triage", "Layout", "SmallReader", "LargeReader")
OPTIONAL = frozenset({"LargeReader"})  # may sleep at zero replicas, may be unschedulable (degraded)
CACHE_S = 2.0
PING_TIMEOUT_S = 2.0
CONTROLLER_TIMEOUT_S = 3.0

# Settings Serve applies per deployment; missing ones (unset in every source) take Serve's default.
APPLIED_KEYS = (
    "num_replicas", "max_ongoing_requests", "max_queued_requests", "autoscaling_config", "ray_actor_options",
    "health_check_period_s", "health_check_timeout_s", "graceful_shutdown_timeout_s", "user_config",
)


# ---------------------------------------------------------------------------- redaction
_SECRET_PARTS = ("password", "passwd", "api_key", "apikey", "secret", "credential", "authorization")


def is_secret_key(key: str) -> bool:
    """Whether a config key names a secret. `token` counts only as the whole word or a `_token`
    suffix (hf_token, access_token): `max_tokens`, `min_tokens_per_page` are thresholds."""
    k = key.lower().replace("-", "_")
    return any(p in k for p in _SECRET_PARTS) or k == "token" or k.endswith("_token")


def redact(obj: Any, secret: bool = False, api_key=None) -> Any:
    """`obj` with every non-empty string under a secret key replaced by "***" (numbers and
    booleans stay: they are limits, not secrets). `api_key` (a str, or a deployments.auth.ApiKey,
    which never reveals itself) is hidden wherever it appears as a value, bare or as "Bearer KEY"."""
    if isinstance(obj, dict):
        return {k: redact(v, secret or (isinstance(k, str) and is_secret_key(k)), api_key) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [redact(v, secret, api_key) for v in obj]
    if isinstance(obj, str) and obj:
        if secret or _is_the_key(api_key, obj):
            return "***"
    return obj


def _is_the_key(api_key, value: str) -> bool:
    if api_key is None:
        return False
    if isinstance(api_key, str):
        return api_key in value
    # a substring test, not only the whole value: a key inside a URL or a longer env value must go too
    # (no need for constant time here: the answer is redacted either way)
    return api_key.matches(value) or api_key.accepts_header(value) or api_key._secret in value.encode("utf-8", "ignore")


def public_config(cfg) -> dict[str, Any]:
    """The pagerouter config, secrets redacted (see `redact`)."""
    return redact(cfg.model_dump(mode="json"))


# ---------------------------------------------------------------------------- Serve's view
def _controller():
    import ray
    from ray.serve._private.constants import SERVE_CONTROLLER_NAME, SERVE_NAMESPACE

    return ray.get_actor(SERVE_CONTROLLER_NAME, namespace=SERVE_NAMESPACE)


def _node_resources() -> list[dict[str, float]]:
    import ray

    return [n.get("Resources") or {} for n in ray.nodes() if n.get("Alive")]


def fits_a_node(required: dict[str, float], nodes: list[dict[str, float]]) -> bool:
    """Whether one replica asking for `required` could be placed on some alive node."""
    need = {k: v for k, v in (required or {}).items() if v and v > 0}
    return any(all(node.get(k, 0.0) >= v for k, v in need.items()) for node in nodes)


def current_app_name(default: str) -> str:
    try:
        from ray import serve

        return serve.get_replica_context().app_name
    except Exception:  # noqa: BLE001 - outside a replica (local testing mode)
        return default


def applied_settings(dep: dict[str, Any]) -> dict[str, Any]:
    """What Serve applies to one deployment (from the controller's details), with Serve's
    defaults filled in for settings no source set."""
    from ray.serve._private.config import DeploymentConfig

    conf = dep.get("deployment_config") or {}
    defaults = DeploymentConfig()
    out: dict[str, Any] = {}
    for key in APPLIED_KEYS:
        if key in conf:
            out[key] = conf[key]
        elif key not in ("num_replicas", "autoscaling_config", "ray_actor_options") and hasattr(defaults, key):
            out[key] = getattr(defaults, key)
    out["target_replicas"] = dep.get("target_num_replicas")
    out["required_resources"] = dep.get("required_resources") or {}
    return out


def stage_state(name: str, dep: dict[str, Any] | None, ping: str | None, nodes: list[dict[str, float]] | None) -> dict:
    """One deployment's readiness entry: state, ready (bool), degraded (bool), the figures behind it.

    `ping` is "ok", a one-line failure, or None when no ping was sent (nothing running to ping)."""
    if dep is None:
        return {"state": "missing", "ready": False, "detail": "the Serve controller does not list this deployment"}
    replicas = dep.get("replicas") or []
    running = sum(1 for r in replicas if r.get("state") == "RUNNING")
    starting = sum(1 for r in replicas if r.get("state") in ("STARTING", "UPDATING", "RECOVERING"))
    target = int(dep.get("target_num_replicas") or 0)
    entry: dict[str, Any] = {
        "serve_status": dep.get("status"), "running_replicas": running, "starting_replicas": starting,
        "target_replicas": target,
    }
    if dep.get("message"):
        entry["message"] = " ".join(str(dep["message"]).split())[:300]
    optional = name in OPTIONAL
    schedulable = nodes is None or fits_a_node(dep.get("required_resources") or {}, nodes)
    if running and ping == "ok":
        return {"state": "ready", "ready": True, **entry}
    if running and ping == BUSY:
        return {"state": "busy", "ready": True,
                "detail": f"no replica answered a ping within {PING_TIMEOUT_S:g} s (all busy)", **entry}
    if running and ping is not None:  # an optional tier that died degrades the graph, as when unschedulable
        return {"state": "not_answering", "ready": optional, "degraded": optional, "detail": ping, **entry}
    if not schedulable:
        needs = {k: v for k, v in (dep.get("required_resources") or {}).items() if v}
        detail = f"no node of the cluster can hold a replica asking for {needs}"
        if optional:
            detail += "; flagged pages keep their first reading after the escalation wait"
        return {"state": "unschedulable", "ready": optional, "degraded": optional, "detail": detail, **entry}
    if optional and running == 0:
        state = "scaled_to_zero" if target == 0 else "waking"
        return {"state": state, "ready": True, **entry}
    return {"state": "starting" if starting else "no_running_replica", "ready": False, **entry}


BUSY = "busy"  # a ping that timed out on a running replica
ACTOR_CHECK_TIMEOUT_S = 1.0  # a live replica actor answers __ray_ready__ from its event loop


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

        def running(name: str) -> bool:
            if app is None:  # no controller view: ping the required stages anyway
                return name not in OPTIONAL
            return any(r.get("state") == "RUNNING" for r in (deps.get(name) or {}).get("replicas") or [])

        # LargeReader at zero is not pinged: a ping would wake it.
        names = [n for n in STAGES if running(n)]
        pings = dict(zip(names, await asyncio.gather(*(self.ping(n) for n in names))))
        for name in [n for n in names if pings[n] == BUSY and app is not None]:
            if await replicas_dead((deps.get(name) or {}).get("replicas") or []):
                pings[name] = "ping failed: the process of every running replica is dead"
        states: dict[str, dict] = {}
        ingress = deps.get("Ingress")
        states["Ingress"] = {"state": "ready", "ready": True,
                             **({"serve_status": ingress.get("status")} if ingress else {})}
        for name in STAGES:
            if app is None:
                ping = pings.get(name)
                states[name] = ({"state": "ready", "ready": True} if ping in ("ok", BUSY) else
                                {"state": "unknown", "ready": name in OPTIONAL, "detail": ping or problem})
            else:
                states[name] = stage_state(name, deps.get(name), pings.get(name), nodes)
        not_ready = [n for n, s in states.items() if not s["ready"]]
        degraded = [n for n, s in states.items() if s.get("degraded")]
        status = "unavailable" if not_ready else ("degraded" if degraded else "ok")
        body: dict[str, Any] = {"status": status, "version": self.version, "app": current_app_name(self.default_app),
                                "deployments": states}
        if not_ready:
            body["not_ready"] = not_ready
            body["detail"] = "cannot serve: " + "; ".join(
                f"{n} {states[n]['state']}" + (f" ({states[n]['detail']})" if states[n].get("detail") else "")
                for n in not_ready
            )
        if degraded:
            body["degraded"] = degraded
        if problem:
            body["controller"] = problem
        return not not_ready, body


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


async def applied_config(readiness: Readiness) -> dict[str, Any]:
    """Per deployment, the settings Serve runs it with, read from the controller now."""
    app, problem = await readiness.details()
    if app is None:
        return {"error": problem}
    deps = app.get("deployments") or {}
    out = {name: applied_settings(dep) for name, dep in sorted(deps.items())}
    for name in ("Layout", "SmallReader"):  # batch settings live in the replica: ask one
        if name in out and name in readiness.handles and any(
            r.get("state") == "RUNNING" for r in deps[name].get("replicas") or []
        ):
            try:
                reply = await asyncio.wait_for(_result(readiness.handles[name].ready.remote()), PING_TIMEOUT_S)
                out[name]["batching"] = reply.get("batching")
            except Exception as exc:  # noqa: BLE001 - shown instead of the figures
                out[name]["batching"] = {"error": f"no replica answered: {type(exc).__name__}"}
    return out
