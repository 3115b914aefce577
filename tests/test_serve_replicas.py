"""Replica counts and fractional CPUs derived from the machine (graph/replicas.py): pure rules,
the config field and the `pagerouter serve --replicas` flag parsing. No Ray is started here."""

from __future__ import annotations

import argparse

import pytest
from pydantic import ValidationError

from pagerouter.graph.replicas import SCALED, Machine, derive_replicas, keep_explicit, plan_line
from pagerouter.config import PagerouterConfig
from pagerouter.config.serve import ServeConfig


def _reserved(s: ServeConfig) -> float:
    """Logical CPUs all ceilings together ask Ray for (what must fit for autoscaling to reach them)."""
    return sum(getattr(s, n).max_replicas * getattr(s, n).num_cpus for n in (*SCALED, "large_reader"))


def test_two_core_box_gets_one_replica_each_and_fits():
    s = derive_replicas(ServeConfig(), Machine(cores=2, ray_cpus=4, memory_gb=23), "auto")
    assert {n: getattr(s, n).max_replicas for n in SCALED} == dict.fromkeys(SCALED, 1)
    assert all(getattr(s, n).min_replicas == 1 for n in SCALED)
    assert _reserved(s) <= 4
    assert s.replicas == "auto"


def test_default_derivation_keeps_what_the_config_sets_itself():
    """`pagerouter serve` without --replicas: the machine fills in only what the config left open."""
    cfg = PagerouterConfig.model_validate({"serve": {
        "layout": {"num_cpus": 0.3, "max_replicas": 3},
        "small_reader": {"min_replicas": 0},  # may scale to zero: the derived ceiling still applies
        "ingress": {"max_replicas": 5},
    }}).serve
    machine = Machine(cores=8, ray_cpus=8, memory_gb=64)
    derived = derive_replicas(cfg, machine, "auto")
    s = keep_explicit(cfg, derived)
    assert (s.layout.num_cpus, s.layout.max_replicas) == (0.3, 3)  # the config's own numbers
    assert s.small_reader.min_replicas == 0 and s.small_reader.max_replicas == 4  # floor kept, ceiling derived
    assert s.ingress.max_replicas == 5 and s.ingress.min_replicas == 1
    assert s.small_reader.num_cpus == derived.small_reader.num_cpus  # left open: derived
    assert (s.triage.max_replicas, s.triage.num_cpus) == (derived.triage.max_replicas, derived.triage.num_cpus)
    assert s.triage.max_replicas == 8 // 3 and s.replicas is None  # more than the old cap of one
    ServeConfig.model_validate(s.model_dump())  # still a valid config


def test_more_cores_more_small_readers_than_layouts_and_all_fit():
    s = derive_replicas(ServeConfig(), Machine(cores=16, ray_cpus=16, memory_gb=64), "auto")
    got = {n: getattr(s, n).max_replicas for n in SCALED}
    assert got == {"ingress": 2, "triage": 5, "layout": 5, "small_reader": 8}
    assert _reserved(s) <= 16 + 1e-9
    # the relative weights survive the fitting: a SmallReader replica reserves more than an Ingress one
    assert s.small_reader.num_cpus > s.triage.num_cpus > s.ingress.num_cpus > 0


def test_cpus_are_scaled_down_until_every_ceiling_fits():
    machine = Machine(cores=6, ray_cpus=6, memory_gb=64)  # e.g. head --num-cpus 2 + worker --num-cpus 4
    s = derive_replicas(ServeConfig(), machine, "auto")
    assert s.small_reader.max_replicas == 3 and s.layout.max_replicas == 2
    assert _reserved(s) <= 6 + 1e-9
    tight = derive_replicas(ServeConfig(), Machine(cores=6, ray_cpus=2, memory_gb=64), "auto")
    assert _reserved(tight) <= 2 + 1e-9
    assert tight.small_reader.num_cpus < s.small_reader.num_cpus


def test_memory_cuts_the_largest_ceilings_first():
    roomy = derive_replicas(ServeConfig(), Machine(cores=32, ray_cpus=32, memory_gb=256), "auto")
    small = derive_replicas(ServeConfig(), Machine(cores=32, ray_cpus=32, memory_gb=8), "auto")
    assert roomy.small_reader.max_replicas == 16
    total = sum(getattr(small, n).max_replicas * r for n, r in
                {"ingress": 0.3, "triage": 0.45, "layout": 0.5, "small_reader": 0.7}.items())
    assert total <= 8 * 0.7 - 1.5
    assert all(getattr(small, n).max_replicas >= 1 for n in SCALED)
    assert small.small_reader.max_replicas < roomy.small_reader.max_replicas


def test_integer_mode_sets_ceilings_and_keeps_targets_and_large_reader():
    base = ServeConfig()
    s = derive_replicas(base, Machine(cores=2, ray_cpus=4, memory_gb=23), 3)
    assert (s.triage.max_replicas, s.layout.max_replicas, s.small_reader.max_replicas, s.ingress.max_replicas) == (
        3, 3, 3, 1)
    assert s.small_reader.target_ongoing_requests == base.small_reader.target_ongoing_requests
    assert s.small_reader.max_batch_size == base.small_reader.max_batch_size
    assert s.large_reader == base.large_reader
    assert _reserved(s) <= 4 + 1e-9
    assert "small_reader 1-3" in plan_line(s)


@pytest.mark.parametrize("bad", [0, -2, "many", True])
def test_bad_modes_are_refused(bad):
    with pytest.raises(ValueError):
        derive_replicas(ServeConfig(), Machine(cores=2, ray_cpus=4, memory_gb=23), bad)


def test_config_field_accepts_auto_and_counts_only():
    assert PagerouterConfig.model_validate({"serve": {"replicas": "auto"}}).serve.replicas == "auto"
    assert PagerouterConfig.model_validate({"serve": {"replicas": 4}}).serve.replicas == 4
    assert PagerouterConfig().serve.replicas is None
    for bad in (0, "lots"):
        with pytest.raises(ValidationError):
            PagerouterConfig.model_validate({"serve": {"replicas": bad}})


def test_serve_flag_parses_auto_and_counts():
    from pagerouter.graph.serve_command import _replicas_arg

    assert _replicas_arg("auto") == "auto" and _replicas_arg("5") == 5
    for bad in ("0", "x", "-1"):
        with pytest.raises(argparse.ArgumentTypeError):
            _replicas_arg(bad)


def test_serve_address_with_nothing_listening_is_one_line(capsys):
    """`pagerouter serve --address` to a dead address: one line, no Ray started, no traceback."""
    import socket

    from pagerouter.cli.main import main

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound, not listening: a connect is refused
        rc = main(["serve", "--address", f"127.0.0.1:{port}", "--replicas", "auto"])
    err = capsys.readouterr().err
    assert rc != 0
    assert f"cannot join the Ray cluster at 127.0.0.1:{port}" in err and "Traceback" not in err


def test_shares_the_machine_cannot_schedule_are_one_line_not_a_hang():
    """configs/serve-gpu.yaml on 2 cores: GPU shares and 7.5 CPUs that Ray (4 logical CPUs) cannot
    place; configs/vlm-cpu.yaml, derived as `pagerouter serve` does, fits."""
    from pathlib import Path

    from pagerouter.graph.replicas import unschedulable
    from pagerouter.config import load_config

    repo = Path(__file__).resolve().parents[1]
    two_cores = Machine(cores=2, ray_cpus=4, memory_gb=24)
    gpu = load_config(repo / "configs" / "serve-gpu.yaml").serve
    error, _ = unschedulable(gpu, two_cores)
    assert error and "num_gpus" in error and "Ray has 0 GPUs" in error
    no_gpu = gpu.model_copy(update={n: getattr(gpu, n).model_copy(update={"num_gpus": 0})
                                    for n in ("layout", "small_reader", "large_reader")})
    error, _ = unschedulable(no_gpu, two_cores)
    assert error and "need 7.5 CPUs" in error and "Ray has 4" in error
    cpu = load_config(repo / "configs" / "vlm-cpu.yaml").serve
    assert unschedulable(keep_explicit(cpu, derive_replicas(cpu, two_cores, "auto")), two_cores) == (None, None)
    on_gpu_box = Machine(cores=16, ray_cpus=32, memory_gb=128, gpus=1)
    assert unschedulable(gpu, on_gpu_box) == (None, None)
