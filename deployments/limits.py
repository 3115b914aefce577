"""Kept for deployments/fast_path.py, which imports WalkHead from here: admission, deadlines and
client identity moved to pagerouter.service, the stage calls to deployments/stage_calls.py."""

from .stage_calls import WalkHead  # noqa: F401
