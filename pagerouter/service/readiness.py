"""Whether the graph can serve a request now: each deployment's state, and the /healthz report.

The served graph (deployments/health.py) gathers two views, the Serve controller's (each
deployment's status, replicas and their states, required resources) and a live ping of each
stage; this module turns them into one entry per deployment and the report. Triage, Layout and
SmallReader must each have a running replica that answers; the Ingress is answering the probe
itself. LargeReader (the escalation tier) may legitimately sit at zero replicas: calls to it
queue while it wakes. If its replicas cannot be placed on any node of the cluster (e.g. it asks
for a GPU the cluster lacks) the answer is still ready but `degraded`, because the graph does
serve every page: flagged pages keep their first reading after the bounded escalation wait
(pagerouter.flow.pipeline.ocr_flow). Pulling the only server out of a load balancer for an
optional tier would turn degraded service into none; the report says which tier is missing.
"""

from __future__ import annotations

from typing import Any

STAGES = ("Triage", "Layout", "SmallReader", "LargeReader")
OPTIONAL = frozenset({"LargeReader"})  # may sleep at zero replicas, may be unschedulable (degraded)
PING_TIMEOUT_S = 2.0
BUSY = "busy"  # a ping that timed out on a running replica


def fits_a_node(required: dict[str, float], nodes: list[dict[str, float]]) -> bool:
    """Whether one replica asking for `required` could be placed on some alive node."""
    need = {k: v for k, v in (required or {}).items() if v and v > 0}
    return any(all(node.get(k, 0.0) >= v for k, v in need.items()) for node in nodes)


def has_running_replica(dep: dict[str, Any] | None) -> bool:
    return any(r.get("state") == "RUNNING" for r in (dep or {}).get("replicas") or [])


def stages_to_ping(app: dict[str, Any] | None) -> list[str]:
    """The stages with a replica to ping. Without the controller's view (`app` None) the required
    ones are pinged anyway; LargeReader at zero is never pinged: a ping would wake it."""
    deps = (app or {}).get("deployments") or {}
    return [n for n in STAGES if (n not in OPTIONAL if app is None else has_running_replica(deps.get(n)))]


def stage_state(name: str, dep: dict[str, Any] | None, ping: str | None, nodes: list[dict[str, float]] | None) -> dict:
    """One deployment's readiness entry: state, ready (bool), degraded (bool), the figures behind it.

    `ping` is "ok", BUSY, a one-line failure, or None when no ping was sent (nothing running to ping)."""
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


def graph_report(app: dict[str, Any] | None, problem: str | None, pings: dict[str, str],
                 nodes: list[dict[str, float]] | None, version: str, app_name: str) -> tuple[bool, dict]:
    """(ready, body) of /healthz from the controller's view of the application (None, and why in
    `problem`, when it could not be had), the pings sent and the alive nodes' resources."""
    deps = (app or {}).get("deployments") or {}
    states: dict[str, dict] = {}
    ingress = deps.get("Ingress")
    states["Ingress"] = {"state": "ready", "ready": True, **({"serve_status": ingress.get("status")} if ingress else {})}
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
    body: dict[str, Any] = {"status": status, "version": version, "app": app_name, "deployments": states}
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
