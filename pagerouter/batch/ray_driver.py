"""`pagerouter batch INPUT... -o OUTDIR --ray [ADDRESS]`: the batch as a Ray Data pipeline.

Connects to a Ray cluster (ADDRESS, or `ray.init()`'s own choice: RAY_ADDRESS, a cluster
started on this machine, else a new local one), builds the dataset of `ray_stages.py` over
the planned files, and feeds what comes back to `ray_assembly.Assembler` (and, sooner, the finished
pages the stages post to the driver's mailbox: `early_pages.py`). Ray is imported only
inside these functions: the core package imports without it.

Fault tolerance is Ray's: a task whose process or node dies is retried (`batch.max_retries`),
an actor pool restarts its actor and retries the batch, lost blocks are rebuilt from lineage;
a block Ray Data gives up on is dropped (`batch.max_errored_blocks`) and its pages come out
`failed` with that reason. Ray Data prints per-stage progress; the end summary adds CPU- and
GPU-seconds per page (measured inside the stages) and $ per million pages at the config's prices.
"""

from __future__ import annotations

import math
import os
import warnings
from contextlib import contextmanager
from pathlib import Path

from .fsio import Output
from .inputs import BatchItem
from .journal import latest, read_records, tmp_tag
from .ray_stages import (
    CpuPool,
    EscalationStage,
    FileJob,
    LayoutStage,
    ReaderStage,
    RunSpec,
    drop_local_copies,
    dump,
    open_files,
    triage_ranges,
)


def _spread() -> dict:
    """Triage tasks spread over the nodes (a long file's ranges run everywhere). Being a
    `ray_remote_args_fn`, it also keeps Ray Data from fusing triage into the open task
    (ranges would then run one after another) or into the layout actors."""
    return {"scheduling_strategy": "SPREAD"}


DATA_USAGE_ENV = "RAY_DATA_USAGE_DISABLED"

# Raylet settings a bulk run wants on every node. A raylet reads them when its node starts (the
# environment of `ray start`), so no driver can set them: cluster.yaml starts its nodes with
# them, docs/batch.md gives them for other clusters, and benchmarks/bench_batch_ray.py's
# clusters get them unless told otherwise.
NODE_SETTINGS = {
    # Ray ends a task worker idle for 1 s; the open and triage tasks idle that long whenever the
    # pools hold them back, and each replacement imports pagerouter and starts a MuPDF isolation
    # pool again (a 3,060-page run started ~26 worker processes; 1.47x -> 1.30x --local's CPU).
    "RAY_idle_worker_killing_time_threshold_ms": "600000",
    # Ray starts a worker per CPU ahead of any task, with no runtime env. Every task of a run
    # carries pagerouter's (its worker setup hook, `connect`), so none can use them: they idle as
    # long as the node lives, at ~8 CPU-ms a second each (a core worker's 10 ms signal check).
    "RAY_enable_worker_prestart": "0",
    "RAY_prestart_worker_first_driver": "0",
}


def connect(address: str | None, quiet: bool):
    """Join the cluster of `--ray [ADDRESS]`. The bare flag (argparse gives "") and None are
    `ray.init()`'s own search: RAY_ADDRESS, a cluster started on this machine, else a new local
    one; "local" (always a new local one), "auto" and host:port are Ray's own forms, passed on."""
    import ray

    from pagerouter.isolation import FAULT_ENV

    env = {k: os.environ[k] for k in (FAULT_ENV,) if k in os.environ}  # the test-only hook reaches the workers
    # Ray Data's usage report is sent by a detached actor it starts on the driver's node: a Ray
    # worker process that then lives as long as the cluster, at ~8 CPU-ms a second idle (its core
    # worker's 10 ms signal check). pagerouter sends no such report unless the user's environment
    # asks for it (RAY_DATA_USAGE_DISABLED=0).
    os.environ.setdefault(DATA_USAGE_ENV, "1")
    # each Ray worker skips PyMuPDF's unused layout model before it imports pymupdf
    runtime_env: dict = {"worker_process_setup_hook": "pagerouter.common.pymupdf_setup.skip_pymupdf_layout"}
    if env:
        runtime_env["env_vars"] = env
    kwargs = {"runtime_env": runtime_env}
    if not address or address == "local":
        kwargs["include_dashboard"] = False
    ray.init(address=address or None, logging_level="ERROR",
             log_to_driver=not quiet, **kwargs)
    return ray


def _small_repartition_tasks(ds, b) -> None:
    """The streaming repartition's tasks ask what an open task asks. Ray Data gives them no
    remote args, so each asked Ray's default task CPU (1): on nodes of 1 CPU, where the pools'
    actors hold part of every node, no such task could ever start and the run waited forever
    at `0/?`. `Dataset.repartition` takes no remote args (Ray 2.60), so they are set on its
    logical operator; a Ray whose operator lacks the field keeps its default."""
    op = ds._logical_plan.dag
    if type(op).__name__ == "StreamingRepartition" and hasattr(op, "ray_remote_args") and not op.ray_remote_args:
        object.__setattr__(op, "ray_remote_args", {"num_cpus": b.open_num_cpus, "max_retries": b.max_retries})


def model_pools(cfg) -> list[tuple[str, tuple, object]]:
    """The pipeline's actor pools in order: (config name, the stages it runs, its `PoolSettings`).
    A stage that asks a GPU has a pool of its own, with its own settings; the stages between
    such pools (all of them when none asks a GPU) run together in one `batch.cpu_pool` pool
    (`ray_stages.CpuPool`), so a CPU actor loads each model once and pages are not copied from
    actor to actor."""
    if not cfg.ocr.enabled:
        return []
    b = cfg.batch
    steps = [("layout", LayoutStage, b.layout), ("small_reader", ReaderStage, b.small_reader)]
    if cfg.ocr.escalation.enabled:
        steps.append(("escalation", EscalationStage, b.escalation))
    pools: list[tuple[str, tuple, object]] = []
    for role, stage, own in steps:
        if own.num_gpus:
            pools.append((f"batch.{role}", (stage,), own))
        elif pools and pools[-1][0] == "batch.cpu_pool":
            pools[-1] = ("batch.cpu_pool", pools[-1][1] + (stage,), b.cpu_pool)
        else:
            pools.append(("batch.cpu_pool", (stage,), b.cpu_pool))
    return pools


def _keep_added_actors(ctx) -> None:
    """A pool keeps the actors it added until its stage has had all its input. Ray Data's default
    stops one as soon as the pool's utilisation falls to half (2 actors, one page in flight) and
    starts another when pages queue again, and every start is a process and a model load: a 70/30
    run started 3 actors in a pool of `max_size` 2. Set for this run's dataset only (this
    driver's DataContext); the pool still shrinks at the end of its input and when it is over its
    resource budget."""
    from ray.data.context import AutoscalingConfig

    cur = ctx.autoscaling_config
    ctx.autoscaling_config = AutoscalingConfig(
        actor_pool_util_upscaling_threshold=cur.actor_pool_util_upscaling_threshold,
        actor_pool_util_downscaling_threshold=-1.0,  # utilisation is never negative: never on utilisation
        actor_pool_max_upscaling_delta=cur.actor_pool_max_upscaling_delta)


@contextmanager
def scheduler_wait(seconds: float):
    """Ray Data's scheduling loop, in the driver, waits `seconds` at most for its running tasks
    before it looks again, for the run's length. Ray Data's own wait is 0.1 s, and its loop
    (a `ray.wait` on every running task, then the resource, metric and progress upkeep) was the
    driver's largest cost: 2-3% of a core for the whole run, about 70% of the driver's CPU outside
    its start (graph/README.md). Our tasks and actor batches run for seconds and an actor keeps
    several batches queued, so a longer wait leaves no worker idle; a finished document reaches
    the driver at most `seconds` later. Ray Data 2.60 has no setting for it, only the module's
    constant, which is put back on exit; a Ray without that constant keeps its own loop."""
    from ray.data._internal.execution import streaming_executor_state as loop

    before = getattr(loop, "WAIT_FOR_TASK_COMPLETION_TIMEOUT_S", None)
    if before is None:
        yield
        return
    loop.WAIT_FOR_TASK_COMPLETION_TIMEOUT_S = seconds
    try:
        yield
    finally:
        loop.WAIT_FOR_TASK_COMPLETION_TIMEOUT_S = before


def build_dataset(ray, items: list[BatchItem], skips: list[dict], staged: list, run: RunSpec, cfg,
                  ray_progress: bool = False, mailbox=None):
    """The pipeline over `items`. `ray_progress`: Ray Data's own per-stage progress on stderr (a
    block every 10 s when stderr is no terminal); off, the run shows only pagerouter's one bar.
    `mailbox`: `early_pages.EarlyPages.actor`, where the open and triage tasks also post the
    pages they finish (None: the dataset alone brings them)."""
    import logging

    from ray.data import ActorPoolStrategy, DataContext

    b = cfg.batch
    ctx = DataContext.get_current()
    ctx.max_errored_blocks = b.max_errored_blocks
    _keep_added_actors(ctx)
    ctx.enable_progress_bars = ray_progress
    if not ray_progress:  # its start and end lines and the "progress bars disabled" notice too
        logging.getLogger("ray.data").setLevel(logging.ERROR)
    jobs = [{"doc": i, "kind": "file", "payload": dump(FileJob(it.scheme, it.path, it.shown, skip, stage))}
            for i, (it, skip, stage) in enumerate(zip(items, skips, staged))]
    blocks = max(1, math.ceil(len(jobs) / b.files_per_open_task))
    jobs = [jobs[i] for i in open_task_order([_local_size(it) for it in items], blocks)]
    # Pools: an actor lost with its node is restarted on a survivor (max_restarts=-1) and its
    # batches retried until it is (max_task_retries=-1, Ray Data's own default). A finite count
    # ran out within seconds: until the GCS declares the node dead, each retry fails at once with
    # ActorUnavailableError, and every page of the batch came out `failed`. A page's own engine
    # error never reaches Ray (the stage keeps it to the page), so only lost processes retry.
    with warnings.catch_warnings():  # max_retries & co. as plain remote args: deprecated after 2.60, not gone
        warnings.simplefilter("ignore")
        ds = ray.data.from_items(jobs, override_num_blocks=blocks)
        ds = ds.map_batches(open_files, fn_kwargs={"run": run, "mailbox": mailbox}, batch_size=None, batch_format="pyarrow",
                            num_cpus=b.open_num_cpus, max_retries=b.max_retries)
        ds = ds.repartition(target_num_rows_per_block=1)  # every range its own block, so its own task
        _small_repartition_tasks(ds, b)
        ds = ds.map_batches(triage_ranges, fn_kwargs={"run": run, "mailbox": mailbox}, batch_size=1, batch_format="pyarrow",
                            num_cpus=b.triage_num_cpus, max_retries=b.max_retries, ray_remote_args_fn=_spread)
        pools = model_pools(cfg)
        actors = sum(pool.max_size for _name, _stages, pool in pools)  # their model threads share the cores
        for _name, stages, pool in pools:
            share = {"cpus": pool.num_cpus, "actors": actors}
            if len(stages) == 1:  # a stage alone in its pool needs no chain
                udf, kwargs = stages[0], {"run": run, **share}
            else:
                udf, kwargs = CpuPool, {"run": run, "stages": stages, **share}
            ds = ds.map_batches(udf, fn_constructor_kwargs=kwargs, batch_size=pool.batch_size,
                                batch_format="pyarrow", num_cpus=pool.num_cpus, num_gpus=pool.num_gpus or None,
                                compute=ActorPoolStrategy(min_size=pool.min_size, max_size=pool.max_size),
                                max_restarts=-1, max_task_retries=-1)
    return ds


def _local_size(item: BatchItem) -> int:
    """A local file's size in bytes; 0 for a URI's file (not asked of its store) or a missing one."""
    if item.scheme:
        return 0
    try:
        return os.stat(item.path).st_size
    except OSError:
        return 0


def open_task_order(sizes: list[int], blocks: int) -> list[int]:
    """The order of the files (their indices) such that `from_items`' `blocks` even contiguous
    blocks, one open task each, share the largest files: dealt largest first, one to each block
    in turn, then each block's files smallest first. A folder of scans named after a folder of
    born-digital files put every scan into the last open tasks, each holding more OCR rows than
    it may (`ray_stages.OPEN_TASK_BYTES`): all but the first two of its scans were opened there
    for their page count only, copied to the node and opened again by a triage task. Dealt,
    each task holds one or two of them and triages them where it opened them. Small files first:
    a task posts each file's finished pages as it goes (`early_pages`), so its first outputs do
    not wait for its scans. Files of one size (URIs all count as 0: not looked up) keep the given
    order."""
    n = len(sizes)
    if n == 0 or min(sizes) == max(sizes):
        return list(range(n))
    blocks = max(1, min(blocks, n))
    # dealt in turn, the first n % blocks blocks get one file more: the lengths of the contiguous
    # blocks `from_items` cuts
    dealt: list[list[int]] = [[] for _ in range(blocks)]
    for turn, i in enumerate(sorted(range(n), key=lambda i: (-sizes[i], i))):
        dealt[turn % blocks].append(i)
    return [i for block in dealt for i in sorted(block, key=lambda i: (sizes[i], i))]


def stage_asks(cfg) -> tuple[list[tuple[str, float, float]], list[tuple[str, float]]]:
    """What the pipeline asks of the cluster: the actors its pools keep for the whole run
    (name, CPUs, GPUs; `min_size` of each pool) and its CPU tasks (name, CPUs)."""
    b = cfg.batch
    actors: list[tuple[str, float, float]] = []
    for name, _stages, pool in model_pools(cfg):
        actors += [(name, pool.num_cpus, pool.num_gpus)] * pool.min_size
    return actors, [("batch.open_num_cpus", b.open_num_cpus), ("batch.triage_num_cpus", b.triage_num_cpus)]


def plan_problem(nodes: list[dict], cfg) -> str | None:
    """One line when the cluster (`nodes`: each alive node's resources, {"CPU": .., "GPU": ..})
    cannot run the plan, None when it can. Ray Data would otherwise wait for resources that never
    come, silently: an actor or task asking more than any one node has, or the pools' actors
    (placed first, largest first, on the node with the most room left) leaving no node room for
    a triage task."""
    if not nodes:
        return "the Ray cluster has no alive node"
    actors, tasks = stage_asks(cfg)
    free = [[n.get("CPU", 0.0), n.get("GPU", 0.0)] for n in nodes]
    biggest_cpu, biggest_gpu = max(f[0] for f in free), max(f[1] for f in free)
    for name, cpus in tasks:
        if cpus > biggest_cpu + 1e-9:
            return f"{name} is {cpus:g} but the largest node of the Ray cluster has {biggest_cpu:g} CPUs: its tasks would never start"
    for name, cpus, gpus in sorted(set(actors), key=lambda a: (-a[2], -a[1])):
        if gpus > biggest_gpu + 1e-9:
            return (f"{name}.num_gpus is {gpus:g} but the Ray cluster's largest node has {biggest_gpu:g} GPUs: "
                    "its actors would never start")
        if cpus > biggest_cpu + 1e-9:
            return (f"{name}.num_cpus is {cpus:g} but the largest node of the Ray cluster has {biggest_cpu:g} CPUs: "
                    "its actors would never start")
    for name, cpus, gpus in sorted(actors, key=lambda a: (-a[2], -a[1])):
        fits = [f for f in free if f[0] >= cpus - 1e-9 and f[1] >= gpus - 1e-9]
        if not fits:
            total = sum(n.get("CPU", 0.0) for n in nodes)
            return (f"the pools' min_size actors ask {sum(a[1] for a in actors):g} CPUs and "
                    f"{sum(a[2] for a in actors):g} GPUs, more than the Ray cluster's {len(nodes)} nodes hold "
                    f"({total:g} CPUs): {name} has no room; lower batch.*.min_size or num_cpus")
        best = max(fits, key=lambda f: (f[0], f[1]))
        best[0] -= cpus
        best[1] -= gpus
    triage = max(c for _, c in tasks)
    if max(f[0] for f in free) < triage - 1e-9:
        return (f"the pools' actors leave no node {triage:g} CPUs for a triage task (batch.triage_num_cpus): "
                "the run would wait forever; lower batch.*.num_cpus or min_size, or add a node")
    return None


def drop_node_copies(ray, timeout_s: float = 30.0) -> None:
    """Remove the node-local copies of long files (`ray_stages.local_copy`) on every alive node at
    the end of a run. Best effort: a node that does not answer keeps its copies (named by sha256,
    so a later run reads the same bytes from them), and a run beside this one on the same cluster
    that loses a copy fetches its file again."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    drop = ray.remote(num_cpus=0, max_retries=0)(drop_local_copies)
    refs = [drop.options(scheduling_strategy=NodeAffinitySchedulingStrategy(n["NodeID"], soft=False)).remote()
            for n in ray.nodes() if n.get("Alive")]
    try:
        ray.get(refs, timeout=timeout_s)
    except Exception:  # noqa: BLE001 - best effort: the run's outputs are written already
        for ref in refs:
            ray.cancel(ref, force=True)


def alive_nodes(ray) -> list[dict]:
    return [n["Resources"] for n in ray.nodes() if n.get("Alive")]


def workers_problem(ray, timeout_s: float = 120.0) -> str | None:
    """One line when no Ray worker can run pagerouter within `timeout_s` (a node without
    pagerouter installed restarts its workers forever, and Ray Data would wait silently)."""
    @ray.remote(num_cpus=0, max_retries=0)
    def probe() -> str:
        import pagerouter

        return pagerouter.__name__

    ref = probe.remote()
    try:
        ray.get(ref, timeout=timeout_s)
    except ray.exceptions.GetTimeoutError:
        ray.cancel(ref, force=True)
        return (f"no Ray worker could import pagerouter within {timeout_s:g} s: install it on every node "
                "(cluster.yaml's setup does) or put this checkout on PYTHONPATH before `ray start`")
    except Exception as exc:  # noqa: BLE001 - the worker's own import error, in one line
        from .failures import one_line

        return f"a Ray worker cannot import pagerouter: {one_line(exc)}"
    return None


def ray_figures_line(s: dict) -> str:
    def f(v, spec):
        return "-" if v is None else format(v, spec)
    return (f"ray: first output after {f(s['time_to_first_output_s'], '.1f')} s; stage CPU {f(s['cpu_s_per_page'], '.3f')} "
            f"s/page, GPU {f(s['gpu_s_per_page'], '.3f')} s/page = ${f(s['usd_per_million_pages'], '.2f')} per million pages "
            f"(the whole cluster's {s['cluster_cpus']:g} CPUs for the wall time: "
            f"${f(s['usd_per_million_pages_whole_cluster'], '.2f')})")


def write_manifest(output: Output, journal_dir: Path, items: list[BatchItem], config_hash: str, shard: tuple[int, int]) -> None:
    """`pagerouter-batch.pages.parquet` in OUTDIR: one row per page of every done file of this
    plan (this run's and earlier ones'), from the journal's records."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    wanted = {i.uri for i in items}
    rows = []
    for rec in latest(read_records(journal_dir)).values():
        if rec.get("input") in wanted and rec.get("config_hash") == config_hash and rec.get("status") == "done":
            rows += rec.get("page_rows") or []
    schema = pa.schema([("path", pa.string()), ("page", pa.int32()), ("route", pa.string()), ("status", pa.string()),
                        ("flags", pa.list_(pa.string())), ("engine", pa.string()), ("seconds", pa.float64()),
                        ("run", pa.string())])
    table = pa.Table.from_pylist(sorted(rows, key=lambda r: (r["path"], r["page"])), schema=schema)
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    name = "pagerouter-batch.pages.parquet" if shard[1] == 1 else f"pagerouter-batch.shard-{shard[0]}-of-{shard[1]}.pages.parquet"
    output.write([(name, sink.getvalue().to_pybytes())], tmp_tag(shard))
