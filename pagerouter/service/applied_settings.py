"""The settings Serve runs a deployment with, as /v1/config shows them.

Read from the Serve controller's details of one deployment (deployments/health.py asks it); a
setting no source set (the pagerouter config, a Serve config YAML) takes Serve's default.
"""

from __future__ import annotations

from typing import Any

APPLIED_KEYS = (
    "num_replicas", "max_ongoing_requests", "max_queued_requests", "autoscaling_config", "ray_actor_options",
    "health_check_period_s", "health_check_timeout_s", "graceful_shutdown_timeout_s", "user_config",
)
_NO_DEFAULT = ("num_replicas", "autoscaling_config", "ray_actor_options")  # unset means "not used", not a default


def applied_settings(dep: dict[str, Any], defaults: object) -> dict[str, Any]:
    """What Serve applies to one deployment, `defaults` (Serve's own `DeploymentConfig()`) filled
    in for settings no source set; with its target replica count and the resources one replica asks for."""
    conf = dep.get("deployment_config") or {}
    out: dict[str, Any] = {}
    for key in APPLIED_KEYS:
        if key in conf:
            out[key] = conf[key]
        elif key not in _NO_DEFAULT and hasattr(defaults, key):
            out[key] = getattr(defaults, key)
    out["target_replicas"] = dep.get("target_num_replicas")
    out["required_resources"] = dep.get("required_resources") or {}
    return out
