"""`pagerouter batch INPUT... -o OUTDIR --ray [ADDRESS]`: the batch as a Ray Data pipeline.

Connects to a Ray cluster (ADDRESS, or `ray.init()`'s own choice: RAY_ADDRESS, a cluster
started on this machine, else a new local one), builds the dataset of `ray_stages.py` over
the planned files, and feeds what comes back to `ray_assembly.Assembler`. Ray is imported only
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
from pathlib import Path

from .fsio import Output
from .inputs import BatchItem
from .journal import latest, read_records, tmp_tag
from .ray_stages import (
    EscalationStage,
    FileJob,
    LayoutStage,
    ReaderStage,
    RunSpec,
    dump,
    open_files,
    triage_ranges,
)


def _spread() -> dict:
    """Triage tasks spread over the nodes (a long file's ranges run everywhere). Being a
    `ray_remote_args_fn`, it also keeps Ray Data from fusing triage into the open task
    (ranges would then run one after another) or into the layout actors."""
    return {"scheduling_strategy": "SPREAD"}


def connect(address: str | None, quiet: bool):
    """Join the cluster of `--ray [ADDRESS]`. The bare flag (argparse gives "") and None are
    `ray.init()`'s own search: RAY_ADDRESS, a cluster started on this machine, else a new local
    one; "local" (always a new local one), "auto" and host:port are Ray's own forms, passed on."""
    import ray

    from pagerouter.isolation import FAULT_ENV

    env = {k: os.environ[k] for k in (FAULT_ENV,) if k in os.environ}  # the test-only hook reaches the workers
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


def build_dataset(ray, items: list[BatchItem], skips: list[dict], staged: list, run: RunSpec, cfg, quiet: bool):
    from ray.data import ActorPoolStrategy, DataContext

    b = cfg.batch
    ctx = DataContext.get_current()
    ctx.max_errored_blocks = b.max_errored_blocks
    ctx.enable_progress_bars = not quiet
    jobs = [{"doc": i, "kind": "file", "payload": dump(FileJob(it.scheme, it.path, it.shown, skip, stage))}
            for i, (it, skip, stage) in enumerate(zip(items, skips, staged))]
    with warnings.catch_warnings():  # max_retries & co. as plain remote args: deprecated after 2.60, not gone
        warnings.simplefilter("ignore")
        ds = ray.data.from_items(jobs, override_num_blocks=max(1, math.ceil(len(jobs) / b.files_per_open_task)))
        ds = ds.map_batches(open_files, fn_kwargs={"run": run}, batch_size=None, batch_format="pyarrow",
                            num_cpus=b.open_num_cpus, max_retries=b.max_retries)
        ds = ds.repartition(target_num_rows_per_block=1)  # every range its own block, so its own task
        ds = ds.map_batches(triage_ranges, fn_kwargs={"run": run}, batch_size=1, batch_format="pyarrow",
                            num_cpus=b.triage_num_cpus, max_retries=b.max_retries, ray_remote_args_fn=_spread)
        if cfg.ocr.enabled:
            pools = [(LayoutStage, b.layout), (ReaderStage, b.small_reader)]
            if cfg.ocr.escalation.enabled:
                pools.append((EscalationStage, b.escalation))
            for stage, pool in pools:
                ds = ds.map_batches(stage, fn_constructor_kwargs={"run": run}, batch_size=pool.batch_size,
                                    batch_format="pyarrow", num_cpus=pool.num_cpus, num_gpus=pool.num_gpus or None,
                                    compute=ActorPoolStrategy(min_size=pool.min_size, max_size=pool.max_size),
                                    max_restarts=-1, max_task_retries=b.max_retries)
    return ds


def gpu_problem(ray, cfg) -> str | None:
    """A usage error when a pool asks for more GPUs per actor than the cluster has (it would wait forever)."""
    b = cfg.batch
    pools = {"layout": b.layout, "small_reader": b.small_reader}
    if cfg.ocr.escalation.enabled:
        pools["escalation"] = b.escalation
    have = ray.cluster_resources().get("GPU", 0.0)
    for role, pool in pools.items():
        if cfg.ocr.enabled and pool.num_gpus > have:
            return (f"batch.{role}.num_gpus is {pool.num_gpus:g} but the Ray cluster has {have:g} GPUs: "
                    "its actors would never start")
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
