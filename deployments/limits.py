"""Kept for deployments/fast_path.py, which imports WalkHead from here: it is
pagerouter.service.walk_head's; admission, deadlines and client identity are in pagerouter.service too."""

from pagerouter.service.walk_head import WalkHead  # noqa: F401
