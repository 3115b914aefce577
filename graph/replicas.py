"""Replica counts and fractional CPUs per deployment, derived from the machine (or Ray cluster).

`derive_replicas(serve_cfg, machine, mode)` is pure: it takes the machine's figures and returns
a new ServeConfig whose Ingress, Triage, Layout and SmallReader settings carry autoscaling
floors/ceilings and `num_cpus`; `machine_now()` reads the figures (Ray's cluster resources when
Ray is up, else this host). Imports no Ray, so the rule is unit-tested on its own
(tests/test_serve_replicas.py).

Why these rules:
- The OCR engines (onnxruntime) each use about two cores, so more SmallReader replicas than
  half the cores only queue on the CPU; the SmallReader (recognition is 80-85% of OCR time
  per page) gets the most, Layout and Triage a third of the cores, the light Ingress one per 8.
- Ray schedules by logical CPUs, not by real use: a ceiling whose replicas cannot all be
  placed never starts (Serve waits forever for the resources). So `num_cpus` is scaled down
  until every ceiling, plus the LargeReader's own reservation, fits in Ray's CPUs; the
  relative weights are the defaults' (0.1 : 0.25 : 0.5 : 0.5).
- Memory: each replica holds its models (measured RSS roughly 0.3-0.7 GB); ceilings are cut,
  largest first, until the sum fits in 70% of memory less Ray's own ~1.5 GB.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

from pagerouter.config.serve import ServeConfig

SCALED = ("ingress", "triage", "layout", "small_reader")
"""ServeConfig fields this module sets; the LargeReader (escalation, maybe a GPU) keeps its own."""
CPU_WEIGHT = {"ingress": 0.1, "triage": 0.25, "layout": 0.5, "small_reader": 0.5}
RSS_GB = {"ingress": 0.3, "triage": 0.45, "layout": 0.5, "small_reader": 0.7}
"""Resident memory one replica needs, rounded up from `pagerouter serve` replicas under load."""
CORES_PER_REPLICA = {"ingress": 8, "triage": 3, "layout": 3, "small_reader": 2}
RAY_OVERHEAD_GB = 1.5
MEMORY_SHARE = 0.7
MAX_CPU_PER_REPLICA = 1.0
MIN_CPU_PER_REPLICA = 0.01


@dataclass(frozen=True)
class Machine:
    """What the graph may use: real cores, Ray's logical CPUs, memory (GB)."""

    cores: int
    ray_cpus: float
    memory_gb: float
    gpus: float = 0.0  # Ray's GPUs (0 on a CPU machine)


def _ceilings(machine: Machine, mode: str | int) -> dict[str, int]:
    if mode == "auto":
        return {name: max(1, machine.cores // CORES_PER_REPLICA[name]) for name in SCALED}
    n = int(mode)
    return {"ingress": max(1, math.ceil(n / 4)), "triage": n, "layout": n, "small_reader": n}


def _fit_memory(ceilings: dict[str, int], memory_gb: float) -> dict[str, int]:
    budget = memory_gb * MEMORY_SHARE - RAY_OVERHEAD_GB
    out = dict(ceilings)
    while sum(out[n] * RSS_GB[n] for n in out) > budget:
        shrinkable = [n for n in out if out[n] > 1]
        if not shrinkable:
            break  # one replica each is the floor; Serve will say if even that does not fit
        out[max(shrinkable, key=lambda n: (out[n] * RSS_GB[n], n))] -= 1
    return out


def derive_replicas(serve_cfg: ServeConfig, machine: Machine, mode: str | int) -> ServeConfig:
    """A copy of `serve_cfg` with replica ceilings, floors and `num_cpus` derived for `machine`.

    `mode`: "auto" (ceilings from cores and memory) or an integer N (ceiling N for Triage, Layout,
    SmallReader; the Ingress ceil(N/4)). Floors are 1 (initial replicas too), so a deployment
    starts small and autoscaling adds replicas under load; targets and delays stay as configured."""
    if mode != "auto" and (isinstance(mode, bool) or not isinstance(mode, int) or mode < 1):
        raise ValueError(f"replicas must be 'auto' or an integer >= 1, not {mode!r}")
    ceilings = _fit_memory(_ceilings(machine, mode), machine.memory_gb)
    large = serve_cfg.large_reader
    left = machine.ray_cpus - large.max_replicas * large.num_cpus
    demand = sum(CPU_WEIGHT[n] * ceilings[n] for n in SCALED)
    scale = min(1.0, left / demand) if left > 0 else 0.0
    updates = {}
    for name in SCALED:
        cpus = CPU_WEIGHT[name] * scale
        cpus = max(MIN_CPU_PER_REPLICA, min(MAX_CPU_PER_REPLICA, math.floor(cpus * 100) / 100))
        current = getattr(serve_cfg, name)
        updates[name] = current.model_copy(update={
            "num_cpus": cpus, "min_replicas": 1, "max_replicas": ceilings[name], "initial_replicas": None,
        })
    return serve_cfg.model_copy(update={**updates, "replicas": mode})


PINNABLE = ("num_cpus", "min_replicas", "max_replicas", "initial_replicas")
"""Fields a config may set by hand; `keep_explicit` puts them back over a derivation."""


def keep_explicit(original: ServeConfig, derived: ServeConfig) -> ServeConfig:
    """`derived` with every field of PINNABLE that `original`'s config set explicitly restored.

    `pagerouter serve` derives by default (no `--replicas`, no `serve.replicas`): a config that
    names a deployment's `max_replicas` or `num_cpus` meant those numbers, and only what it left
    open comes from the machine. The ceiling is raised to the floor where the two would cross."""
    updates = {}
    for name in SCALED:
        cur, new = getattr(original, name), getattr(derived, name)
        pinned = {f: getattr(cur, f) for f in PINNABLE if f in cur.model_fields_set}
        if pinned:
            merged = new.model_copy(update=pinned)
            if merged.max_replicas < max(merged.min_replicas, 1):
                merged = merged.model_copy(update={"max_replicas": max(merged.min_replicas, 1)})
            updates[name] = merged
    return derived.model_copy(update={**updates, "replicas": original.replicas})


def machine_now(ray_cpus: float | None = None, cluster: bool = False) -> Machine:
    """The figures to derive from. `cluster=False`: this host's cores and memory, with `ray_cpus`
    logical CPUs (default 2x cores, as `pagerouter serve` starts Ray). `cluster=True` (Ray is
    connected to a cluster): its total CPUs and memory; its nodes are other machines (or slices of
    one), so their logical CPUs stand for cores."""
    if cluster:
        import ray

        res = ray.cluster_resources()
        cpus = float(res.get("CPU", 1))
        return Machine(cores=max(1, int(cpus)), ray_cpus=cpus, memory_gb=float(res.get("memory", 0)) / 2**30,
                       gpus=float(res.get("GPU", 0)))
    cores = os.cpu_count() or 1
    memory_gb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return Machine(cores=cores, ray_cpus=float(ray_cpus or 2 * cores), memory_gb=memory_gb, gpus=_ray_gpus())


def _ray_gpus() -> float:
    """GPUs of the Ray this process is connected to (0 when none is up: nothing was detected)."""
    try:
        import ray

        return float(ray.cluster_resources().get("GPU", 0)) if ray.is_initialized() else 0.0
    except Exception:  # noqa: BLE001 - a Ray that cannot answer has no GPU for us
        return 0.0


DEPLOYMENTS = (*SCALED, "large_reader")


def unschedulable(serve_cfg: ServeConfig, machine: Machine) -> tuple[str | None, str | None]:
    """(error, warning): why Ray could not place the graph's replicas on `machine`, in one line
    each, or None. Serve would otherwise wait for the resources forever (a hang, not an error).
    Counted: every deployment's floor (its initial replicas) plus one LargeReader replica, since
    the first flagged page wakes it. A LargeReader asking for GPUs the cluster lacks is only a
    warning: it never wakes, and flagged pages keep their first reading after the escalation wait."""
    need, parts = 0.0, []
    for name in DEPLOYMENTS:
        s = getattr(serve_cfg, name)
        n = max(1, s.min_replicas) if name == "large_reader" else max(s.min_replicas, s.initial_replicas or 0)
        if n and s.num_cpus:
            need += n * s.num_cpus
            parts.append(f"{name} {n} x {s.num_cpus:g}")
        if s.num_cpus > machine.ray_cpus:
            return (f"serve.{name}.num_cpus {s.num_cpus:g} is more than Ray's {machine.ray_cpus:g} CPUs: no replica "
                    "of it can start; lower it (configs/vlm-cpu.yaml fits 2 cores)"), None
        if s.num_gpus > machine.gpus and name != "large_reader":
            return (f"serve.{name}.num_gpus {s.num_gpus:g} but Ray has {machine.gpus:g} GPUs: no replica of it can "
                    "start; set num_gpus 0 (on a CPU machine use configs/vlm-cpu.yaml)"), None
    if need > machine.ray_cpus + 1e-9:
        return (f"the deployments need {need:g} CPUs ({', '.join(parts)}) but Ray has {machine.ray_cpus:g} "
                f"({machine.cores} cores): Serve would wait for them forever; lower serve.<deployment>.num_cpus "
                "(configs/vlm-cpu.yaml fits 2 cores)"), None
    large = serve_cfg.large_reader
    if large.num_gpus > machine.gpus:
        return None, (f"serve.large_reader.num_gpus {large.num_gpus:g} but Ray has {machine.gpus:g} GPUs: the "
                      "escalation tier will never wake; flagged pages keep their first reading (escalation_timeout)")
    return None, None


def plan_line(serve_cfg: ServeConfig) -> str:
    """One line for the operator: per deployment min-max replicas x num_cpus."""
    parts = []
    for name in (*SCALED, "large_reader"):
        s = getattr(serve_cfg, name)
        parts.append(f"{name} {s.min_replicas}-{s.max_replicas} x {s.num_cpus:g} CPU")
    return ", ".join(parts)


__all__ = ["Machine", "derive_replicas", "keep_explicit", "machine_now", "plan_line", "unschedulable"]
