"""Open and triage tasks in flight at once are capped at the CPUs the pools leave
(`ray_driver.task_concurrency`): each task in flight is a Ray worker process of its own, and the
tasks' fractional CPU asks let Ray run 8 opens at once on a 2-CPU node. No Ray here: a fake
cluster that answers `cluster_resources`."""

from __future__ import annotations

from pagerouter.batch.ray_driver import task_concurrency
from pagerouter.config import PagerouterConfig


class FakeRay:
    def __init__(self, cpus: float):
        self.cpus = cpus

    def cluster_resources(self) -> dict:
        return {"CPU": self.cpus}


def test_tasks_get_the_cpus_the_pools_leave():
    cfg = PagerouterConfig()  # pools' min_size actors: 0.25 + 0.5 + 0.25 CPUs
    assert task_concurrency(FakeRay(3.0), cfg) == 2  # the bench's head (1 CPU) + one 2-CPU worker node
    assert task_concurrency(FakeRay(65.0), cfg) == 64


def test_at_least_one_task_runs_on_a_cluster_the_pools_fill():
    assert task_concurrency(FakeRay(1.0), PagerouterConfig()) == 1
    assert task_concurrency(FakeRay(2.0), PagerouterConfig.model_validate({"batch": {"small_reader": {"num_cpus": 1.5}}})) == 1
