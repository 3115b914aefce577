"""`pagerouter batch INPUT... -o OUTDIR [--local | --endpoint URL | --grpc HOST:PORT | --ray [ADDRESS]]`
(wired in pagerouter/cli/main.py). Every mode plans its inputs (local paths or filesystem URIs),
OUTDIR and journal the same way (pagerouter/batch/fsio.py); then `--ray` runs the Ray Data
pipeline, the others the runner's worker threads. Exit codes: 0 every file done with no failed
page, 1 some file or page failed (listed with its error; `--retry-failed` runs the failed files
again), 2 usage error.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import threading
import time
import uuid
from pathlib import Path

from .common import EXIT_OK, EXIT_PAGES_FAILED, load_cli_config, option_problem, option_values, usage_error

DEFAULT_JOBS = 2


def add_batch_parser(sub, add_option_flags) -> None:
    b = sub.add_parser("batch", help="convert many files into OUTDIR, resumably (journal in OUTDIR)")
    b.add_argument("inputs", nargs="+", metavar="INPUT",
                   help="files, folders (recursive), globs ('in/**/*.pdf') or @LIST (one path per line), or "
                   "filesystem URIs pyarrow opens (s3://, gs://, file://; globs after the prefix)")
    b.add_argument("-o", "--outdir", required=True,
                   help="writes <relative path>.md and .json per input, the journal and the summary here (also a "
                   "filesystem URI such as s3://bucket/out/; the journal then lives in --journal-dir)")
    where = b.add_mutually_exclusive_group()
    where.add_argument("--local", action="store_true", help="convert in this process (the default)")
    where.add_argument("--endpoint", metavar="URL", help="a pagerouter server's HTTP base URL, e.g. http://127.0.0.1:8000")
    where.add_argument("--grpc", metavar="HOST:PORT", help="a pagerouter server's gRPC address")
    where.add_argument("--ray", nargs="?", const="", metavar="ADDRESS",
                       help="run as a Ray Data pipeline on the Ray cluster at ADDRESS (host:port, auto, local; none: "
                       "RAY_ADDRESS or a cluster on this machine, else a new local one). Put it after the inputs, or "
                       "write --ray=ADDRESS")
    b.add_argument("--journal-dir", type=Path, metavar="DIR",
                   help="the local folder of the journal and summary (and --ray's staged pages) instead of OUTDIR "
                   "(default: OUTDIR when it is local, else ~/.cache/pagerouter/batch/<hash of OUTDIR>)")
    b.add_argument("--jobs", "-j", type=int, default=DEFAULT_JOBS,
                   help=f"files converted at once (default {DEFAULT_JOBS}; each local job has its own converter)")
    b.add_argument("--shard", metavar="I/N", help="convert only shard I (0-based) of N, e.g. 0/4 on the first of four machines")
    b.add_argument("--retry-failed", action="store_true", help="convert again the files an earlier run recorded as failed")
    b.add_argument("--config", type=Path, help="pagerouter YAML config (local conversion; the Markdown's output section)")
    b.add_argument("--page-markers", action="store_true", help="mark page boundaries in the Markdown")
    b.add_argument("--pages", help="page selection for every input, e.g. 1-3 (1-based)")
    b.add_argument("--password", help="password for encrypted PDFs")
    b.add_argument("--wait", choices=["interactive", "bulk"], default="bulk",
                   help="how long flagged pages wait for the escalation tier (default bulk)")
    b.add_argument("--escalation-wait-s", type=float, metavar="SECONDS", help="wait at most this long for escalation")
    b.add_argument("--timeout", type=float, default=3600.0, help="seconds per request with --endpoint/--grpc (default 3600)")
    from pagerouter.clients.command_flags import add_retry_flags  # pydantic only: no client package is loaded

    add_retry_flags(b)  # --max-attempts, --retry-deadline: how long --endpoint/--grpc wait out a busy server
    from ..batch.runner import DEFAULT_JOB_MB

    b.add_argument("--job-mb", type=float, default=DEFAULT_JOB_MB, metavar="MB",
                   help=f"with --endpoint/--grpc, send files of this size or more as server-side jobs (polled; a killed "
                   f"run re-attaches to them); 0 = never (default {DEFAULT_JOB_MB:g})")
    b.add_argument("--application", default="pagerouter", help="Serve application name (gRPC routing)")
    b.add_argument("--quiet", "-q", action="store_true", help="no progress and no summary on stderr")
    b.add_argument("--ray-progress", action="store_true",
                   help="with --ray, also Ray Data's own per-stage progress on stderr (a block every 10 s off a "
                   "terminal); without it the run shows one progress bar")
    b.add_argument("--filter", action="store_true",
                   help="judge each file with the document filter first (the config's `filter` section; on even "
                   "if its `enabled` is false) and skip the rejected ones, with their reasons in the journal")
    add_option_flags(b)
    b.epilog = ("Re-running the same command resumes: files with a done record for the same bytes and config are "
                "skipped. The API key of a server that requires one is read from PAGEROUTER_API_KEY or "
                "PAGEROUTER_API_KEY_FILE. On a Ray cluster: pagerouter batch ... --ray ADDRESS (Ray Data), or "
                "--endpoint URL (the cluster's Serve graph).")
    b.set_defaults(func=cmd_batch)


def config_hash(cfg, options: dict) -> str:
    """Hash of the effective config and the per-run options: changing either re-converts (and
    re-judges a file the filter skipped). The filter section counts only when the filter is on,
    so journals written before it existed, or with it off, keep their hash; the bench section
    (prices for `pagerouter bench`) and the batch section (Ray Data ranges and pools) never
    change a conversion and never count."""
    ignored = {"bench", "batch"} if cfg.filter.enabled else {"filter", "bench", "batch"}
    dumped = cfg.model_dump(mode="json", exclude=ignored)
    blob = json.dumps({"config": dumped, "options": options}, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]


def cmd_batch(args) -> int:
    """Plan the inputs, OUTDIR and journal (one way for every mode), then run them here or on Ray."""
    from pagerouter.render.output import to_json, to_markdown

    from ..batch.fsio import Output, plan_items
    from ..batch.inputs import BatchUsageError, in_shard, parse_shard

    cfg = load_cli_config(args.config, args.page_markers)
    if args.filter:
        cfg.filter.enabled = True
    if args.jobs < 1:
        return usage_error("--jobs must be at least 1")
    values = option_values(args)
    opts = {"pages": args.pages, "password": args.password, "wait": args.wait,
            "escalation_wait_s": args.escalation_wait_s, **values}
    if args.ray and not _looks_like_address(args.ray):  # `--ray in/ -o out`: argparse took an input for the address
        args.inputs.insert(0, args.ray)
        args.ray = ""
    try:
        shard = parse_shard(args.shard)
        items = [i for i in plan_items(args.inputs) if in_shard(i, shard)]
        output = Output(args.outdir)
        if output.local is not None:
            output.local.mkdir(parents=True, exist_ok=True)
    except BatchUsageError as exc:
        return usage_error(str(exc))
    except OSError as exc:
        return usage_error(f"{args.outdir}: cannot create output directory: {exc.strerror or exc}")
    journal_dir = (args.journal_dir or output.local or output.default_journal_dir()).resolve()

    def render(doc) -> tuple[str, str]:  # exactly what `pagerouter convert --format both` writes
        return to_markdown(doc, cfg.output, images_rel_to=output.local), to_json(doc)

    h = config_hash(cfg, {k: v for k, v in opts.items() if k != "password"})
    run = _run_ray if args.ray is not None else _run_here
    return run(args, cfg, opts, items, output, journal_dir, h, shard, render)


def _looks_like_address(value: str) -> bool:
    return value in ("auto", "local") or value.startswith("ray://") or bool(re.fullmatch(r"[\w.\-]+:\d+", value))


def _clean_strays(output, journal_dir: Path, shard: tuple[int, int]) -> None:
    """Temp files a killed run of this shard left, once its journal is locked (so they are surely its own)."""
    from ..batch.journal import clean_strays, tmp_tag

    clean_strays(journal_dir, tmp_tag(shard))
    if output.local is not None and output.local != journal_dir:
        clean_strays(output.local, tmp_tag(shard))


def _write_summary(journal_dir: Path, shard: tuple[int, int], summary: dict) -> None:
    from ..batch.journal import tmp_tag, write_atomically

    name = "pagerouter-batch.summary.json" if shard[1] == 1 else f"pagerouter-batch.shard-{shard[0]}-of-{shard[1]}.summary.json"
    write_atomically([(journal_dir / name, json.dumps(summary, indent=2) + "\n")], tmp_tag(shard))


def _exit(summary: dict, items: list) -> int:
    if not items:
        print("pagerouter: warning: no inputs in this shard", file=sys.stderr)
    return EXIT_PAGES_FAILED if summary["failed"] or summary["failed_pages"] else EXIT_OK


def _job_share(cfg, jobs: int):
    """`cfg` for one of `jobs` converters side by side: each job's model sessions get its share of
    the cores (`ocr.onnx_threads`; the journal's config hash is the run's, taken before)."""
    if jobs <= 1:
        return cfg
    from pagerouter.ocr.onnx_sessions import with_core_share

    return cfg.model_copy(update={"ocr": with_core_share(cfg.ocr, len(os.sched_getaffinity(0)) / jobs)})


def _run_here(args, cfg, opts: dict, items: list, output, journal_dir: Path, config_hash: str,
              shard: tuple[int, int], render) -> int:
    """`--local` (in-process converters), `--endpoint` or `--grpc`: the runner's worker threads."""
    from ..batch.journal import Journal, JournalBusy
    from ..batch.runner import BatchRunner, GrpcBackend, HttpBackend, LocalBackend
    from ..batch.summary import BatchProgress, format_summary, summarize

    mode = "http" if args.endpoint else "grpc" if args.grpc else "local"
    if mode == "local":
        from pagerouter.convert.converter import Converter

        try:  # refuse bad options before any file is read (Converter() starts no workers yet)
            probe = Converter(cfg)
            probe.options(**opts)
            probe.escalation_wait(args.wait, args.escalation_wait_s)
            probe.close()
        except ValueError as exc:
            return usage_error(option_problem(exc))
        job_cfg = _job_share(cfg, args.jobs)
        make = lambda: LocalBackend(job_cfg, opts)  # noqa: E731
    else:
        from pagerouter.clients.command_flags import retry_policy
        from pagerouter.clients.deps import MissingDependency, load_client

        try:  # one line before any file, not a failed record per file
            load_client(mode)
            retry = retry_policy(args)
        except MissingDependency as exc:
            return usage_error(exc.message)
        except ValueError as exc:
            return usage_error(str(exc))
        client_opts = {**opts, "images": bool(opts["images"]),
                       "languages": [v for v in (args.lang or "").replace(",", "+").split("+") if v] or None}
        if mode == "http":
            make = lambda: HttpBackend(args.endpoint, client_opts, args.timeout, args.job_mb, retry=retry)  # noqa: E731
        else:
            make = lambda: GrpcBackend(args.grpc, client_opts, args.timeout, args.application, args.job_mb,  # noqa: E731
                                       retry=retry)

    journal_dir.mkdir(parents=True, exist_ok=True)
    try:
        journal = Journal(journal_dir, shard)  # locked first: the strays cleaned next are surely ours
    except JournalBusy as exc:
        return usage_error(str(exc))
    _clean_strays(output, journal_dir, shard)
    progress = BatchProgress(len(items), enabled=not args.quiet)
    judge = None
    if cfg.filter.enabled:
        from pagerouter.intake.docfilter import judge_file

        judge = lambda data: judge_file(data, cfg.filter, isolate=cfg.isolation.enabled, password=args.password)  # noqa: E731
    runner = BatchRunner(output, journal_dir, make, render, config_hash, shard, args.jobs, args.retry_failed, mode,
                         on_done=progress, judge=judge)
    t0 = time.perf_counter()
    try:
        outcomes = runner.run(items, journal)
    finally:
        progress.close()
    summary = summarize(outcomes, time.perf_counter() - t0)
    summary["shard"] = f"{shard[0]}/{shard[1]}"
    _write_summary(journal_dir, shard, summary)
    if not args.quiet:
        print(format_summary(summary), file=sys.stderr)
    return _exit(summary, items)


def _run_ray(args, cfg, opts: dict, items: list, output, journal_dir: Path, config_hash: str,
             shard: tuple[int, int], render) -> int:
    """`--ray`: the Ray Data pipeline of batch/ray_driver.py, assembled by batch/ray_assembly.py."""
    from pagerouter.bench.metrics import cost_per_million
    from pagerouter.convert.converter import Converter

    from ..batch.early_pages import EarlyPages
    from ..batch.failures import one_line
    from ..batch.journal import Journal, JournalBusy, latest, read_records, skip_statuses
    from ..batch.ray_assembly import Assembler, read_staged, staging_path
    from ..batch.ray_driver import (
        alive_nodes,
        build_dataset,
        connect,
        drop_node_copies,
        plan_problem,
        ray_figures_line,
        scheduler_wait,
        workers_problem,
        write_manifest,
    )
    from ..batch.ray_stages import RunSpec, rows_of
    from ..batch.summary import BatchProgress, format_summary, summarize

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
        journal = Journal(journal_dir, shard)  # locked first: the strays cleaned next are surely ours
    except JournalBusy as exc:
        return usage_error(str(exc))
    ray = connect(args.ray, args.quiet)
    problem = plan_problem(alive_nodes(ray), cfg) or workers_problem(ray)
    if problem:
        ray.shutdown()
        journal.close()
        return usage_error(problem)
    _clean_strays(output, journal_dir, shard)
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
    early = None
    try:
        if items:
            lock = threading.Lock()  # the assembler takes rows from the dataset and from the mailbox's thread
            early = EarlyPages(ray, asm.take, lock)
            ds = build_dataset(ray, items, skips, staged, run, cfg, args.ray_progress and not args.quiet,
                               mailbox=early.actor)
            with scheduler_wait(cfg.batch.scheduler_wait_s):
                for batch in ds.iter_batches(batch_size=None, batch_format="pyarrow"):
                    early.check()
                    with lock:
                        asm.take(rows_of(batch))
            early.check()
        complete = True
    except Exception as exc:  # noqa: BLE001 - the pipeline itself failed: what is done stays done, the rest reruns
        problem = f"the Ray Data pipeline stopped: {one_line(exc)}"
    finally:
        if early is not None:
            early.close()
        asm.close(complete)
        journal.close()
        progress.close()
        cluster_cpus = ray.cluster_resources().get("CPU", 0.0) if ray.is_initialized() else 0.0
        if ray.is_initialized():
            drop_node_copies(ray)
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
    _write_summary(journal_dir, shard, summary)
    write_manifest(output, journal_dir, items, config_hash, shard)
    if not args.quiet:
        print(format_summary(summary), file=sys.stderr)
        print(ray_figures_line(summary), file=sys.stderr)
    if problem:
        print(f"pagerouter: error: {problem}; rerun the same command to finish", file=sys.stderr)
        return EXIT_PAGES_FAILED
    return _exit(summary, items)
