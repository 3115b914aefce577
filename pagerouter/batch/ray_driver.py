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

import json
import math
import os
import sys
import time
import uuid
import warnings
from pathlib import Path

from .fsio import FsItem, Output
from .journal import Journal, JournalBusy, clean_strays, latest, read_records, tmp_tag, write_atomically
from .ray_assembly import Assembler, read_staged, staging_path
from .ray_stages import EscalationStage, FileJob, LayoutStage, ReaderStage, RunSpec, dump, open_files, rows_of, triage_ranges


def _spread() -> dict:
    """Triage tasks spread over the nodes (a long file's ranges run everywhere). Being a
    `ray_remote_args_fn`, it also keeps Ray Data from fusing triage into the open task
    (ranges would then run one after another) or into the layout actors."""
    return {"scheduling_strategy": "SPREAD"}


def skip_statuses(items: list[FsItem], previous: dict, config_hash: str, output: Output, retry_failed: bool) -> list[dict]:
    """Per item {sha256 or None: status} of the journal records that let the open task skip it:
    done with both outputs in place, failed (unless --retry-failed), skipped by the filter."""
    by_input: dict[str, dict] = {}
    for (inp, sha, h), rec in previous.items():
        if h == config_hash:
            by_input.setdefault(inp, {})[sha] = rec
    out = []
    for item in items:
        keep = {}
        for sha, rec in by_input.get(item.uri, {}).items():
            st = rec.get("status")
            if st == "done" and all(output.exists(f"{item.rel}{s}") for s in (".md", ".json")):
                keep[sha] = st
            elif (st == "failed" and not retry_failed) or st == "skipped":
                keep[sha] = st
        out.append(keep)
    return out


def connect(address: str | None, quiet: bool):
    import ray

    from pagerouter.isolation import FAULT_ENV

    env = {k: os.environ[k] for k in (FAULT_ENV,) if k in os.environ}  # the test-only hook reaches the workers
    kwargs = {"runtime_env": {"env_vars": env}} if env else {}
    if address in (None, "local"):
        kwargs["include_dashboard"] = False
    ray.init(address=None if address == "local" else address, logging_level="ERROR",
             log_to_driver=not quiet, **kwargs)
    return ray


def build_dataset(ray, items: list[FsItem], skips: list[dict], staged: list, run: RunSpec, cfg, quiet: bool):
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


def run_ray(args, cfg, opts: dict, items: list[FsItem], output: Output, journal_dir: Path, config_hash: str,
            shard: tuple[int, int], render) -> int:
    from pagerouter.bench.metrics import cost_per_million
    from pagerouter.cli_common import EXIT_OK, EXIT_PAGES_FAILED, option_problem, usage_error
    from pagerouter.converter import Converter

    from .summary import BatchProgress, format_summary, summarize

    probe = Converter(cfg)  # starts no isolation worker: only the options are checked
    try:
        options = probe.options(**opts)
        wait = probe.escalation_wait(args.wait, args.escalation_wait_s)
    except ValueError as exc:
        return usage_error(option_problem(exc))
    finally:
        probe.close()
    run = RunSpec(cfg.model_dump_json(), args.pages, args.password, options.ocr, tuple(options.languages or ()),
                  bool(options.images), wait.seconds, wait.why, cfg.filter.enabled, cfg.batch.pages_per_range,
                  {"layout": cfg.batch.layout.num_gpus, "small_reader": cfg.batch.small_reader.num_gpus,
                   "escalation": cfg.batch.escalation.num_gpus})
    journal_dir.mkdir(parents=True, exist_ok=True)
    try:
        journal = Journal(journal_dir, shard)
    except JournalBusy as exc:
        return usage_error(str(exc))
    ray = connect(args.ray, args.quiet)
    problem = gpu_problem(ray, cfg)
    if problem:
        ray.shutdown()
        journal.close()
        return usage_error(problem)
    clean_strays(journal_dir, tmp_tag(shard))
    if output.local is not None and output.local != journal_dir:
        clean_strays(output.local, tmp_tag(shard))
    previous = latest(read_records(journal_dir))
    skips = skip_statuses(items, previous, config_hash, output, args.retry_failed)
    staged = []
    for item in items:
        got = read_staged(staging_path(journal_dir, item), config_hash)
        staged.append((got[0], [line["page"]["number"] for line in got[1]]) if got else None)

    run_id = uuid.uuid4().hex[:12]
    progress = BatchProgress(len(items), enabled=not args.quiet)
    asm = Assembler(items, output, journal, journal_dir, render, config_hash, args.pages, previous, run_id, shard,
                    cfg.batch.max_retries, on_done=progress)
    t0 = time.perf_counter()
    complete = False
    try:
        if items:
            ds = build_dataset(ray, items, skips, staged, run, cfg, args.quiet)
            for batch in ds.iter_batches(batch_size=None, batch_format="pyarrow"):
                asm.take(rows_of(batch))
        complete = True
    except Exception as exc:  # noqa: BLE001 - the pipeline itself failed: what is done stays done, the rest reruns
        problem = f"the Ray Data pipeline stopped: {type(exc).__name__}: {str(exc).strip().splitlines()[0][:400] if str(exc).strip() else ''}"
    finally:
        asm.close(complete)
        journal.close()
        progress.close()
        cluster_cpus = ray.cluster_resources().get("CPU", 0.0) if ray.is_initialized() else 0.0
        ray.shutdown()
    wall = time.perf_counter() - t0
    outcomes = [asm.outcomes[i] for i in sorted(asm.outcomes)]
    summary = summarize(outcomes, wall)
    pages = asm.pages_in
    summary.update({
        "shard": f"{shard[0]}/{shard[1]}", "mode": "ray", "run": run_id, "pages_converted_by_pipeline": pages,
        "time_to_first_output_s": round(asm.first_output_s, 3) if asm.first_output_s is not None else None,
        "cpu_seconds": round(asm.cpu_s, 3), "gpu_seconds": round(asm.gpu_s, 3),
        "cpu_s_per_page": round(asm.cpu_s / pages, 4) if pages else None,
        "gpu_s_per_page": round(asm.gpu_s / pages, 4) if pages else None,
        "usd_per_million_pages": round(cost_per_million(asm.cpu_s, asm.gpu_s, pages, cfg.bench), 2) if pages else None,
        "cluster_cpus": cluster_cpus,
        "usd_per_million_pages_whole_cluster": round(cost_per_million(wall * cluster_cpus, 0.0, pages, cfg.bench), 2)
        if pages else None,
    })
    name = "pagerouter-batch.summary.json" if shard[1] == 1 else f"pagerouter-batch.shard-{shard[0]}-of-{shard[1]}.summary.json"
    write_atomically([(journal_dir / name, json.dumps(summary, indent=2) + "\n")], tmp_tag(shard))
    write_manifest(output, journal_dir, items, config_hash, shard)
    if not args.quiet:
        print(format_summary(summary), file=sys.stderr)
        print(ray_figures_line(summary), file=sys.stderr)
    if problem:
        print(f"pagerouter: error: {problem}; rerun the same command to finish", file=sys.stderr)
        return EXIT_PAGES_FAILED
    if not items:
        print("pagerouter: warning: no inputs in this shard", file=sys.stderr)
    return EXIT_PAGES_FAILED if summary["failed"] or summary["failed_pages"] else EXIT_OK


def ray_figures_line(s: dict) -> str:
    def f(v, spec):
        return "-" if v is None else format(v, spec)
    return (f"ray: first output after {f(s['time_to_first_output_s'], '.1f')} s; stage CPU {f(s['cpu_s_per_page'], '.3f')} "
            f"s/page, GPU {f(s['gpu_s_per_page'], '.3f')} s/page = ${f(s['usd_per_million_pages'], '.2f')} per million pages "
            f"(the whole cluster's {s['cluster_cpus']:g} CPUs for the wall time: "
            f"${f(s['usd_per_million_pages_whole_cluster'], '.2f')})")


def write_manifest(output: Output, journal_dir: Path, items: list[FsItem], config_hash: str, shard: tuple[int, int]) -> None:
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
