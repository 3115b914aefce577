"""A plan the Ray cluster cannot run is refused with one line before the run starts (Ray Data
would wait for the resources forever, printing `0/?`), judged from each alive node's own
resources: an ask larger than any one node, or pools whose actors leave no node room for a
triage task. The default plan fits small nodes (two of 1 CPU each), and cluster.yaml starts its
nodes with the raylet settings a run wants. No Ray here."""

from __future__ import annotations

from pathlib import Path

from pagerouter.batch.ray_driver import plan_problem, stage_asks
from pagerouter.config import PagerouterConfig


def cfg_with(**batch) -> PagerouterConfig:
    return PagerouterConfig.model_validate({"batch": batch})


def test_every_stage_of_the_default_plan_fits_a_one_cpu_node():
    actors, tasks = stage_asks(PagerouterConfig())
    assert all(cpus <= 1 and gpus == 0 for _, cpus, gpus in actors)
    assert all(cpus <= 1 for _, cpus in tasks)
    assert plan_problem([{"CPU": 1.0}, {"CPU": 1.0}], PagerouterConfig()) is None
    assert plan_problem([{"CPU": 2.0}], PagerouterConfig()) is None


def test_the_default_plan_is_one_cpu_pool_of_the_three_model_stages():
    actors, _ = stage_asks(PagerouterConfig())
    assert actors == [("batch.cpu_pool", 0.5, 0.0)]  # was three pools: layout, small_reader, escalation
    assert plan_problem([{"CPU": 1.0}], PagerouterConfig()) is None  # its 0.5 CPU leave a triage task room


def test_a_stage_asking_a_gpu_has_its_own_pool_and_the_cpu_stages_share_one():
    actors, _ = stage_asks(cfg_with(escalation={"num_gpus": 1}))
    assert actors == [("batch.cpu_pool", 0.5, 0.0), ("batch.escalation", 0.5, 1.0)]
    actors, _ = stage_asks(cfg_with(small_reader={"num_gpus": 1}))
    assert [a[0] for a in actors] == ["batch.cpu_pool", "batch.small_reader", "batch.cpu_pool"]


def test_pools_that_fill_the_only_node_are_refused_with_one_line():
    problem = plan_problem([{"CPU": 1.0}], cfg_with(cpu_pool={"num_cpus": 1.0}))  # the pool's 1.0 CPU leave triage nothing
    assert problem is not None and "\n" not in problem
    assert "triage task" in problem and "batch.triage_num_cpus" in problem


def test_an_ask_larger_than_every_node_is_refused_though_the_cluster_sums_more():
    problem = plan_problem([{"CPU": 1.0}] * 4, cfg_with(cpu_pool={"num_cpus": 1.5}))
    assert problem == ("batch.cpu_pool.num_cpus is 1.5 but the largest node of the Ray cluster has 1 CPUs: "
                       "its actors would never start")
    problem = plan_problem([{"CPU": 1.0}] * 4, cfg_with(triage_num_cpus=2))
    assert problem.startswith("batch.triage_num_cpus is 2 but the largest node of the Ray cluster has 1 CPUs")


def test_gpus_are_judged_per_node():
    cfg = cfg_with(escalation={"num_gpus": 1})
    assert "batch.escalation.num_gpus is 1 but the Ray cluster's largest node has 0 GPUs" in plan_problem([{"CPU": 4}], cfg)
    assert plan_problem([{"CPU": 4}, {"CPU": 1, "GPU": 1}], cfg) is None
    two = cfg_with(escalation={"num_gpus": 1, "min_size": 2, "max_size": 2})
    assert "escalation has no room" in plan_problem([{"CPU": 4}, {"CPU": 1, "GPU": 1}], two)


def test_min_size_actors_beyond_the_cluster_are_refused():
    problem = plan_problem([{"CPU": 1.0}, {"CPU": 1.0}], cfg_with(cpu_pool={"min_size": 5, "max_size": 5}))
    assert problem is not None and "lower batch.*.min_size or num_cpus" in problem


def test_no_alive_node():
    assert plan_problem([], PagerouterConfig()) == "the Ray cluster has no alive node"


def test_cluster_yaml_starts_every_node_with_the_settings_a_bulk_run_wants():
    """Raylet settings are read when a node starts: the driver cannot set them, so cluster.yaml's
    `ray start` lines carry them, on the head and on every worker."""
    import yaml

    from pagerouter.batch.ray_driver import NODE_SETTINGS

    cluster = yaml.safe_load((Path(__file__).resolve().parents[1] / "cluster.yaml").read_text())
    for key in ("head_start_ray_commands", "worker_start_ray_commands"):
        (start,) = [c for c in cluster[key] if "ray start" in c]
        words = start.split()
        assert all(f"{k}={v}" in words[:words.index("ray")] for k, v in NODE_SETTINGS.items()), (key, start)
