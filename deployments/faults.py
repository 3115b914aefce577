"""Kept for deployments/triage.py, which imports `stage_fault` from here: the test-only stage
fault hooks live in pagerouter/service/stage_faults.py."""

from pagerouter.service.stage_faults import stage_fault  # noqa: F401
