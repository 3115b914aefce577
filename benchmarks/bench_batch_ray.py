"""`pagerouter batch --ray` on a real loopback Ray cluster (tests/ray_cluster.py): throughput
against `--local` and `--endpoint`, and a fuzz run of broken files (a benchmark, not a test).

    python benchmarks/bench_batch_ray.py throughput [--docs 10] [--pages 8] [--scans 4] [--scans-per-file N] [--modes local,endpoint,node,ray|ray1[,noop][,idle]] [--warm] [--pool-max N] [--files-per-open N] [--ray-env K=V,...]
    python benchmarks/bench_batch_ray.py fuzz [--n 10000] [--seed 1] [--out DIR]

throughput: one generated corpus (`--docs` born-digital files of `--pages` pages with running
heads, plus one file of `--scans` scanned pages, or files of `--scans-per-file`), the same machine, one mode after another:
  local     `pagerouter batch --local --jobs 2` (a Converter per job, MuPDF isolation workers)
  endpoint  `pagerouter serve` (its own local Ray) + `pagerouter batch --endpoint --jobs 2`
  node      one Ray node holding all the machine's cores (`ray start --head --num-cpus <cores>`, no
            worker node): `pagerouter batch --ray ADDRESS` as on one machine
  ray       a head node (1 logical CPU: the actor pools) + 1 worker node (2 CPUs), then + a
            second worker node (another 2): `pagerouter batch --ray ADDRESS`; more logical CPUs
            than the machine has cores, so Ray runs more at once than the cores hold (the
            shape of a cluster and its node loss, not the cost per page of one machine: `node`)
and prints pages/s, CPU-seconds per page and the time to the first output file. CPU is counted two
ways: the reaped tree (the batch process with its waited-for children, plus the server's or the
cluster's live process trees before and after) misses every process that no measured parent
waits for: Ray's worker processes of the job (they end with it), an isolation fork server whose
parent exited. "Every process" sums each process's own CPU, sampled every 0.25 s while the run
goes (`CpuByProcess`, which also prints it by kind of process: which Ray worker ran which stage,
the isolation pools, Ray's daemons); the ratios to `--local` use it; for `--ray` also its ratios to `--local` and Ray's framework cost per page (every process's
CPU less what the stages measured inside themselves, and the mode's CPU less `--local`'s). `ray1` runs only the one-worker cluster. All nodes share this machine's cores, so the one-vs-two-node figure is a ratio on shared
cores, not a scaling measurement.
`noop` (with ray or ray1) runs, on the one-worker cluster, the pipeline's shape with stages that do
nothing (`noop_pipeline`: the same tasks, repartition, actor pools and rows as `--ray` makes of the
corpus, payloads of a like size; not the posts of finished pages to the driver's mailbox,
batch/early_pages.py, one actor call per finished file or range): its CPU per page is Ray's framework cost measured directly,
beside the estimate (mode CPU less the stages' own).
`idle` (with ray or ray1) then samples the same cluster with no job for as long as the ray1 run
took: its daemons' and Ray Data's actors' own ticking, which a long-lived cluster pays whether a
batch runs or not; the ratio to `--local` is also shown with it taken out.

fuzz: `--n` inputs mutated from real PDFs (the first two pages of each file of the shared
corpus) and generated ones (tests/test_fuzz_intake.py's bases) with tests/pdf_mutations.py
(bit flips, truncation, xref and stream damage, duplicated xrefs, spliced chunks, huge
objects), through `--ray` with MuPDF isolation on (OCR off: this measures the intake, not
OCR), on a head + 1 worker cluster. Prints: inputs with a journal record and their statuses
(every input must have one), pages per status, crashes and timeouts the isolation pool saw
(per 10,000 inputs), the slowest input, peak memory of the cluster's processes (sampled
every second) and any process still busy after the run (a wedged worker).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

from pagerouter.common.pymupdf_setup import skip_pymupdf_layout  # noqa: E402

skip_pymupdf_layout()  # a process of ours, as the CLI's: PyMuPDF's unused layout model is not built

import pymupdf  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from pagerouter.bench.metrics import _proc_stats  # noqa: E402
from pagerouter.bench.synth import LOREM, add_scanned_page, add_text_page  # noqa: E402
from tests.hostile_corpus import cmdline, descendants, rss_mb  # noqa: E402
from tests.ray_cluster import RayStartCluster  # noqa: E402

ENV = {**os.environ, "PYTHONPATH": str(REPO), "RAY_AUTH_MODE": "disabled"}
ISOLATION_SEEN = ("worker crashed", "worker exited", "took longer than", "stopped answering")


def tree_cpu(roots: list[int]) -> float:
    """CPU seconds so far of every process below `roots` (with their reaped children's)."""
    stats = _proc_stats()
    return sum(stats[p][1] for r in roots for p in descendants(r) if p in stats)


def children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


class CpuByProcess:
    """Where a mode's CPU went: per process below `roots` (and the batch process's tree), CPU
    seconds used during the run, sampled every `every_s`, summed by kind of process (`kind_of`).
    A process that ends between two samples loses what it used since the last one (its parent
    may count it again as waited-for children): a breakdown, not the mode's total."""

    def __init__(self, roots: list[int], every_s: float = 0.25):
        self.roots, self.every_s = list(roots), every_s
        stats = _own_cpu()
        self.start = {p: stats[p][1] for r in self.roots for p in descendants(r) if p in stats}
        self.seen: dict[int, tuple[float, str]] = {}  # pid -> (CPU so far, its kind)
        self.starts: Counter = Counter()  # processes of each kind that appeared during the run
        self.tick = 0.0

    def sample(self, extra_root: int | None = None) -> None:
        now = time.perf_counter()
        if now - self.tick < self.every_s:
            return
        self.tick = now
        stats, kids = _own_cpu(), {}
        for pid, (ppid, _) in stats.items():
            kids.setdefault(ppid, []).append(pid)
        todo = [(r, "", "") for r in self.roots + ([extra_root] if extra_root else [])]
        while todo:
            pid, parent_kind, parent_cmd = todo.pop()
            if pid not in stats:
                continue
            cmd = cmdline(pid)
            old = self.seen.get(pid)
            kind = kind_of(cmd, parent_kind, pid == extra_root, cmd == parent_cmd)
            if not cmd and old is not None:  # a zombie has no command line: it is still what it was
                kind = old[1]
            if old is None and pid not in self.start:
                self.starts[kind] += 1
            if old is not None and old[1].startswith("ray worker: ") and kind == "ray worker (idle)":
                kind = old[1]  # a worker that ran a stage and now idles is still that stage's
            self.seen[pid] = (stats[pid][1], kind)
            todo.extend((k, kind, cmd) for k in kids.get(pid, []))

    def table(self) -> dict[str, str]:
        """{kind: "CPU seconds (processes)"}, most CPU first."""
        cpu: Counter = Counter()
        count: Counter = Counter()
        for pid, (used, kind) in self.seen.items():
            cpu[kind] += used - self.start.get(pid, 0.0)
            count[kind] += 1
        return {k: f"{v:.2f} ({count[k]})" for k, v in cpu.most_common()}

    def total(self) -> float:
        return sum(used - self.start.get(pid, 0.0) for pid, (used, _) in self.seen.items())


def _own_cpu() -> dict[int, tuple[int, float]]:
    """{pid: (parent pid, its own user+system CPU seconds)}: without its waited-for children's,
    which a breakdown by process would count twice."""
    from pagerouter.bench.metrics import _TICK

    out: dict[int, tuple[int, float]] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                raw = (d / "stat").read_text()
            except OSError:
                continue
            f = raw[raw.rfind(")") + 2:].split()
            out[int(d.name)] = (int(f[1]), (int(f[11]) + int(f[12])) / _TICK)
    return out


def kind_of(cmd: str, parent_kind: str, is_batch: bool, forked: bool) -> str:
    """A process's part in a mode, from its command line (Ray sets a worker's to what it runs;
    a process forked without exec, `forked`, keeps its parent's)."""
    if is_batch:
        return "batch process (driver)"
    if forked:
        return f"isolation workers (forked by {parent_kind.split(': ')[-1].split('->')[0]})"
    if "forkserver" in cmd or "multiprocessing" in cmd:  # forked workers keep the server's command line
        if parent_kind.startswith("isolation fork server"):
            return "isolation workers" + parent_kind[len("isolation fork server"):]
        return f"isolation fork server (of {parent_kind.split(': ')[-1].split('->')[0]})"
    if cmd.startswith("ray::"):
        name = cmd.split()[0][5:]
        if name == "IDLE":
            return "ray worker (idle)"
        return f"ray worker: {name.split('(')[0] if '(' not in name else name[:60]}"
    exe = Path(cmd.split()[0]).name if cmd else ""
    if exe in ("raylet", "gcs_server"):  # before the rest: the raylet's arguments name the worker's script
        return f"ray: {exe}"
    if "default_worker.py" in cmd:  # not yet titled
        return "ray worker (starting)"
    for k in ("gcs_server", "dashboard", "log_monitor", "runtime_env", "monitor.py", "ray start"):
        if k in cmd:
            return f"ray: {k}"
    return cmd[:40] or parent_kind


ONE_NODE = "ray, one node (head only)"


def idle_cluster(roots: list[int], seconds: float) -> dict:
    """The cluster's CPU over `seconds` with no job (its daemons and Ray Data's detached actors
    tick whether a batch runs or not), counted as `timed_batch` counts a mode's."""
    time.sleep(15)  # the run's end settles first: its workers exit, the node copies go
    by_process = CpuByProcess(roots)
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        by_process.sample()
        time.sleep(0.1)
    by_process.tick = 0.0
    by_process.sample()
    total = by_process.total()
    return {"wall_s": seconds, "cpu_s": total, "first_output_s": seconds, "exit": 0, "cpu_all_s": total,
            "cpu_by_process": by_process.table(), "processes_started": dict(by_process.starts)}


def timed_batch(cmd: list[str], out: Path, roots: list[int]) -> dict:
    """Run one `pagerouter batch`; wall, CPU of it and of `roots`' trees, time to the first .md,
    and the CPU by kind of process (`CpuByProcess`)."""
    by_process = CpuByProcess(roots)
    cpu0, tree0, t0 = children_cpu(), tree_cpu(roots), time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=REPO, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    first = None
    err: list[str] = []
    reader = threading.Thread(target=lambda: err.append(proc.stderr.read()), daemon=True)
    reader.start()
    while proc.poll() is None:
        if first is None and out.exists() and next(out.rglob("*.md"), None) is not None:
            first = time.perf_counter() - t0
        by_process.sample(proc.pid)
        time.sleep(0.1)
    wall = time.perf_counter() - t0
    reader.join(5)
    cpu = children_cpu() - cpu0 + tree_cpu(roots) - tree0
    by_process.tick = 0.0
    by_process.sample()
    out.mkdir(parents=True, exist_ok=True)
    (out.parent / f"{out.name}.stderr.log").write_text("".join(err))  # Ray Data's progress log, and any error
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}: {''.join(err)[-2000:]}")
    errors = [ln for ln in "".join(err).splitlines() if ln.startswith("pagerouter: error")]
    return {"wall_s": wall, "cpu_s": cpu, "first_output_s": first if first is not None else wall, "exit": proc.returncode,
            "cpu_all_s": by_process.total(), "cpu_by_process": by_process.table(), "processes_started": dict(by_process.starts),
            **({"errors": errors} if errors else {})}


# ---------------------------------------------------------------------------- throughput
def build_corpus(d: Path, docs: int, pages: int, scans: int, scans_per_file: int = 0) -> int:
    d.mkdir(parents=True, exist_ok=True)
    for i in range(docs):
        doc = pymupdf.open()
        for j in range(pages):
            add_text_page(doc, [LOREM, f"Document {i}, page {j + 1}."], title=f"Doc {i} part {j + 1}",
                          header=f"Doc {i}", footer=str(j + 1))
        doc.save(d / f"doc{i:03d}.pdf")
    per_file = scans_per_file or scans
    for k, first in enumerate(range(0, scans, per_file or 1)):
        # a scanned page is ~4 MB: a large run in one file would be a multi-GB PDF, a cost of
        # that file's size rather than of the pages (so large runs split their scans)
        doc = pymupdf.open()
        for j in range(first, min(first + per_file, scans)):
            add_scanned_page(doc, [f"Scanned ledger page {j + 1}", "Invoices paid in March", "Total due 4,210 euros"])
        doc.save(d / ("scans.pdf" if per_file >= scans else f"scans{k:03d}.pdf"))
    return docs * pages + scans


def throughput(args) -> int:
    work = Path(tempfile.mkdtemp(prefix="prbr"))
    corpus = work / "in"
    n = build_corpus(corpus, args.docs, args.pages, args.scans, args.scans_per_file)
    cfg = work / "cfg.yaml"
    pools = "" if args.pool_max is None else f", cpu_pool: {{max_size: {args.pool_max}}}"
    opens = "" if args.files_per_open is None else f", files_per_open_task: {args.files_per_open}"
    cfg.write_text(f"batch: {{pages_per_range: 32{pools}{opens}}}\n")
    base = [sys.executable, "-m", "pagerouter.cli.main", "batch", str(corpus), "--config", str(cfg), "-q"]
    rows: dict[str, dict] = {}
    modes = args.modes.split(",")
    print(f"corpus: {n} pages ({args.docs} born-digital files x {args.pages} pages, {args.scans} scanned pages); "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", flush=True)
    if "local" in modes:
        rows["local (--jobs 2)"] = timed_batch([*base, "-o", str(work / "local"), "--local", "--jobs", "2"],
                                               work / "local", [])
        print("local", rows["local (--jobs 2)"], flush=True)
    if "endpoint" in modes:
        rows["endpoint (--jobs 2)"] = _endpoint(work, base, cfg)
        print("endpoint", rows["endpoint (--jobs 2)"], flush=True)
    from pagerouter.batch.ray_driver import NODE_SETTINGS

    ray_env = (dict(NODE_SETTINGS) if args.ray_env is None
               else dict(kv.split("=", 1) for kv in args.ray_env.split(",") if kv))

    def warm(c: RayStartCluster) -> None:
        if args.warm:  # Ray Data's detached actors (stats, usage, autoscaling, actor locations) start once
            # per cluster, not per run: a one-row no-op job starts them before the clock, as on a cluster
            # that has run a dataset before
            subprocess.run([sys.executable, str(Path(__file__).resolve()), "noop-pipeline", c.address, "1", "1", "0"],
                           cwd=REPO, env=ENV, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    if "node" in modes:  # one node holding all the machine's cores: one raylet, as `--local` has one machine
        with RayStartCluster(head_cpus=os.cpu_count() or 2, workers=[], env=ray_env) as c:
            warm(c)
            rows[ONE_NODE] = timed_batch([*base, "-o", str(work / "node"), "--ray", c.address], work / "node",
                                         [c.head.pid])
            print("node", rows[ONE_NODE], flush=True)
    if "ray" in modes or "ray1" in modes:
        with RayStartCluster(head_cpus=1, workers=[2], env=ray_env) as c:
            roots = lambda: [p.pid for p in [c.head, *c.workers] if p is not None]  # noqa: E731
            warm(c)
            rows["ray, 1 worker node"] = timed_batch([*base, "-o", str(work / "ray1"), "--ray", c.address],
                                                     work / "ray1", roots())
            print("ray1", rows["ray, 1 worker node"], flush=True)
            if "idle" in modes:  # what the same cluster spends doing nothing, over as long a wall
                rows["idle cluster, as long as ray1"] = idle_cluster(roots(), rows["ray, 1 worker node"]["wall_s"])
                print("idle", rows["idle cluster, as long as ray1"], flush=True)
            if "noop" in modes:
                rows["ray no-op stages, 1 worker node"] = timed_batch(
                    [sys.executable, str(Path(__file__).resolve()), "noop-pipeline", c.address, str(args.docs),
                     str(args.pages), str(args.scans)], work / "noop", roots())
                print("noop", rows["ray no-op stages, 1 worker node"], flush=True)
            if "ray" not in modes:
                return _table(rows, n, work)
            c.add_worker(2)
            c.wait_nodes(3)
            rows["ray, 2 worker nodes"] = timed_batch([*base, "-o", str(work / "ray2"), "--ray", c.address],
                                                      work / "ray2", roots())
            print("ray2", rows["ray, 2 worker nodes"], flush=True)
    return _table(rows, n, work)


def _table(rows: dict[str, dict], n: int, work: Path) -> int:
    print(f"\n| mode | wall s | pages/s | CPU-s/page (reaped tree) | CPU-s/page (every process) | first output s |\n"
          "|---|---|---|---|---|---|")
    for name, r in rows.items():
        if name.startswith("idle"):
            print(f"| {name} | {r['wall_s']:.1f} | - | - | {r['cpu_all_s'] / n:.3f} | - |")
            continue
        print(f"| {name} | {r['wall_s']:.1f} | {n / r['wall_s']:.2f} | {r['cpu_s'] / n:.3f} | {r['cpu_all_s'] / n:.3f} "
              f"| {r['first_output_s']:.1f} |")
    for name, r in rows.items():
        print(f"{name}: CPU-s by process {json.dumps(r['cpu_by_process'])}; started {json.dumps(r['processes_started'])}")
    local = rows.get("local (--jobs 2)")
    idle = rows.get("idle cluster, as long as ray1")
    for name, r in rows.items():
        if name.startswith("idle"):
            continue
        if "no-op" in name:
            print(f"{name}: framework {r['cpu_s'] / n * 1000:.1f} CPU-ms/page measured (the driver and the "
                  f"cluster's processes, stages doing nothing; every process: {r['cpu_all_s'] / n * 1000:.1f})")
            continue
        if not name.startswith("ray"):
            continue
        out = work / ("node" if name == ONE_NODE else "ray1" if "1 worker" in name else "ray2")
        summary = json.loads((out / "pagerouter-batch.summary.json").read_text())
        # Ray's own cost: every process's CPU (the cluster's and the driver's) less what the stages
        # measured inside themselves (open to Markdown, isolation workers included), per page
        framework_ms = (r["cpu_all_s"] - summary["cpu_seconds"]) / n * 1000
        line = f"{name}: framework {framework_ms:.1f} CPU-ms/page (stages {summary['cpu_seconds'] / n * 1000:.1f})"
        if local is not None:
            line += f"; {(r['cpu_all_s'] - local['cpu_all_s']) / n * 1000:+.1f} CPU-ms/page over --local's"
            # the reaped-tree CPU misses processes no measured parent waits for (Ray's workers at
            # the job's end, an isolation fork server whose parent exited): both ratios are shown
            line += (f"; vs --local: {r['cpu_all_s'] / local['cpu_all_s']:.2f}x the CPU-s/page (every process; "
                     f"reaped tree {r['cpu_s'] / local['cpu_s']:.2f}x), {local['wall_s'] / r['wall_s']:.2f}x the pages/s")
            if idle is not None and "1 worker" in name:
                # the cluster's own ticking over as long a wall is no cost of the batch: a cluster
                # that stays up between runs pays it either way
                line += (f"; less the idle cluster's {idle['cpu_all_s']:.1f} CPU-s over the same wall: "
                         f"{(r['cpu_all_s'] - idle['cpu_all_s']) / local['cpu_all_s']:.2f}x")
        print(line)
    if "ray, 1 worker node" in rows and "ray, 2 worker nodes" in rows:
        ratio = rows["ray, 1 worker node"]["wall_s"] / rows["ray, 2 worker nodes"]["wall_s"]
        print(f"\ntwo worker nodes / one: {ratio:.2f}x the pages/s (all nodes share this machine's "
              f"{os.cpu_count()} cores: a ratio on shared cores, not scaling)")
    return 0


def noop_pipeline(address: str, docs: int, pages: int, scans: int) -> int:
    """`--ray`'s pipeline (ray_driver.build_dataset) with stages that do nothing but make the rows
    the real ones make of the throughput corpus: per born-digital file one `pages` row (its open
    task triages it), per scanned page one `ocr` row, leaving each open task as one `bundle` row
    that the triage task unpacks, through the repartition, the triage tasks
    and the actor pools of `--ray` (`ray_driver.model_pools`), to the driver. Payloads: 3 kB per finished page, 150 kB per OCR
    page (about a pickled page and a page render)."""
    import math

    from ray.data import ActorPoolStrategy, DataContext

    from pagerouter.batch.ray_driver import _keep_added_actors, _small_repartition_tasks, _spread, connect, model_pools
    from pagerouter.batch.ray_stages import Row, rows_of, table_of
    from pagerouter.config import PagerouterConfig

    ray = connect(address, quiet=True)
    cfg = PagerouterConfig()
    b = cfg.batch
    ctx = DataContext.get_current()
    _keep_added_actors(ctx)
    ctx.enable_progress_bars = False
    import logging

    logging.getLogger("ray.data").setLevel(logging.ERROR)
    files = [{"doc": i, "kind": "file", "payload": b"x" * 200} for i in range(docs + (1 if scans else 0))]

    def opened(batch):  # as open_files: the task's rows leave as one bundle
        import pickle

        out = []
        for r in rows_of(batch):
            if r.doc < docs:
                out.append((r.doc, "pages", b"p" * (3000 * pages)))
            else:
                out += [(r.doc, "ocr", b"o" * 150_000) for _ in range(scans)]
        return table_of([Row(out[0][0], "bundle", pickle.dumps(out, protocol=5))])

    def passed(batch):  # as triage_ranges: a bundle unpacked into its rows
        return table_of([Row(*t) for r in rows_of(batch) for t in r.obj])

    class Pool:
        def __call__(self, batch):
            return batch

    ds = ray.data.from_items(files, override_num_blocks=max(1, math.ceil(len(files) / b.files_per_open_task)))
    ds = ds.map_batches(opened, batch_size=None, batch_format="pyarrow", num_cpus=b.open_num_cpus)
    ds = ds.repartition(target_num_rows_per_block=1)
    _small_repartition_tasks(ds, b)
    ds = ds.map_batches(passed, batch_size=1, batch_format="pyarrow", num_cpus=b.triage_num_cpus,
                        ray_remote_args_fn=_spread)
    for _name, _stages, pool in model_pools(cfg):  # the pools `--ray` runs (one, of the three stages, by default)
        ds = ds.map_batches(Pool, batch_size=pool.batch_size, batch_format="pyarrow", num_cpus=pool.num_cpus,
                            compute=ActorPoolStrategy(min_size=pool.min_size, max_size=pool.max_size))
    got = sum(len(rows_of(t)) for t in ds.iter_batches(batch_size=None, batch_format="pyarrow"))
    ray.shutdown()
    print(f"no-op pipeline: {got} rows", file=sys.stderr)
    return 0


def plumbing(args) -> int:
    """CPU the `--ray` stages spend carrying OCR pages, without Ray and without OCR: one file of
    `--scans` scanned pages (as `throughput` makes them) through `open_files` (the file triaged
    in place, its rows bundled), a copy into a store as Ray's puts make (the table pickled with
    protocol 5, each out-of-band buffer copied once), `triage_ranges` (the bundle unpacked), the
    store again, and each OCR row's object as a pool reads it. The main process's CPU per step,
    the least of `--repeat` runs (MuPDF's isolation workers, which render the pages, not
    counted: `--local` pays them too). Run it on two trees (PYTHONPATH) to compare them."""
    import pickle

    import pagerouter
    from pagerouter.batch.ray_stages import FileJob, Row, RunSpec, dump, open_files, rows_of, table_of, triage_ranges
    from pagerouter.config import PagerouterConfig

    def stored(table):
        bufs: list = []
        data = pickle.dumps(table, protocol=5, buffer_callback=bufs.append)
        return pickle.loads(data, buffers=[bytearray(b.raw()) for b in bufs])

    cfg = PagerouterConfig()
    run = RunSpec(cfg.model_dump_json(), None, None, "auto", (), False, 900.0, "bulk wait", False,
                  cfg.batch.pages_per_range)
    with tempfile.TemporaryDirectory(prefix="prplumb") as tmp:
        path = Path(tmp) / "scans.pdf"
        doc = pymupdf.open()
        for j in range(args.scans):
            add_scanned_page(doc, [f"Scanned ledger page {j + 1}", "Invoices paid in March", "Total due 4,210 euros"])
        doc.save(path)
        doc.close()
        job = table_of([Row(0, "file", dump(FileJob("", str(path), path.name, {})))])
        open_files(job, run)  # warm: imports, the isolation pool
        steps: dict[str, list[float]] = {}

        def timed(name, fn, *a):
            t0 = time.process_time()
            out = fn(*a)
            steps.setdefault(name, []).append(time.process_time() - t0)
            return out

        for _ in range(args.repeat):
            opened = timed("open_files", open_files, job, run)
            opened = timed("store", stored, opened)
            triaged = timed("triage_ranges", triage_ranges, opened, run)
            triaged = timed("store again", stored, triaged)
            objs = timed("pool reads", lambda t: [r.obj for r in rows_of(t) if r.kind == "ocr"], triaged)
            assert len(objs) == args.scans, f"{len(objs)} OCR rows for {args.scans} scanned pages"
            del opened, triaged, objs
    best = {k: min(v) for k, v in steps.items()}
    print(f"tree: {Path(pagerouter.__file__).parents[1]}; {args.scans} scanned pages, least of {args.repeat} runs")
    for k, v in best.items():
        print(f"  {k:14s} {v:6.3f} CPU-s")
    total = sum(best.values())
    print(f"  {'total':14s} {total:6.3f} CPU-s, {1000 * total / args.scans:.1f} CPU-ms per scanned page")
    return 0


def _endpoint(work: Path, base: list[str], cfg: Path) -> dict:

    from tests.serve_fixtures import free_port, pagerouter_serve_process

    ray_tmp = tempfile.mkdtemp(prefix="prbrs", dir="/tmp")
    http_port, grpc_port = free_port(), free_port()
    env = {**ENV, "RAY_ADDRESS": "local", "RAY_TMPDIR": ray_tmp}
    (work / "serve").mkdir()
    with pagerouter_serve_process(work / "serve", cfg, env, http_port, grpc_port, ray_tmp) as proc:
        return timed_batch([*base, "-o", str(work / "endpoint"), "--endpoint", f"http://127.0.0.1:{http_port}",
                            "--jobs", "2"], work / "endpoint", [proc.pid])


# ---------------------------------------------------------------------------- fuzz
def fuzz_bases(corpus: Path, max_bytes: int = 400_000) -> list[bytes]:
    from tests.test_fuzz_intake import BASES

    out = list(BASES)
    for f in sorted(corpus.glob("*.pdf")):
        try:
            with pymupdf.open(f) as doc:
                doc.select(list(range(min(2, doc.page_count))))
                data = doc.tobytes(garbage=1)
        except Exception:  # noqa: BLE001 - a corpus file MuPDF cannot re-save is no base
            continue
        if len(data) <= max_bytes:
            out.append(data)
    return out


def build_fuzz(d: Path, n: int, seed: int, corpus: Path) -> None:
    from tests.pdf_mutations import MORE_OPS, OPS, RandomPick, mutate

    rng = random.Random(seed)
    pick, bases = RandomPick(rng), fuzz_bases(corpus)
    ops = OPS + ["xref"] * 2  # `huge` is drawn on its own, for 1 input in 20: they are big
    for i in range(n):
        chosen = [rng.choice(ops) for _ in range(rng.randint(1, 3))]
        if rng.random() < 0.05:
            chosen.append(MORE_OPS[1])
        sub = d / f"{i // 1000:02d}"
        sub.mkdir(parents=True, exist_ok=True)
        (sub / f"f{i:05d}.pdf").write_bytes(mutate(rng.choice(bases), chosen, pick))
    print(f"fuzz corpus: {n} inputs from {len(bases)} bases (seed {seed})", flush=True)


class Watch:
    """Peak RSS of the processes below `roots`, sampled every `every_s`."""

    def __init__(self, roots, every_s: float = 1.0):
        self.roots, self.every_s, self.stop = roots, every_s, threading.Event()
        self.peak_total = self.peak_one = self.peak_isolation = 0.0
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop.wait(self.every_s):
            pids = [p for r in self.roots() for p in descendants(r)]
            rss = {p: rss_mb(p) for p in pids}
            self.peak_total = max(self.peak_total, sum(rss.values()))
            self.peak_one = max([self.peak_one, *rss.values()])
            iso = [rss[p] for p in pids if "forkserver" in cmdline(p) or "multiprocessing" in cmdline(p)]
            self.peak_isolation = max([self.peak_isolation, *iso])


def busy_after(roots: list[int], window_s: float = 5.0) -> list[str]:
    """Processes of the cluster that burn CPU while nothing runs: wedged workers."""
    a = _proc_stats()
    time.sleep(window_s)
    b = _proc_stats()
    pids = [p for r in roots for p in descendants(r)]
    return [f"{p} {cmdline(p)[:80]} ({b[p][1] - a[p][1]:.1f} s CPU in {window_s:g} s)"
            for p in pids if p in a and p in b and b[p][1] - a[p][1] > 0.5 * window_s]


def fuzz(args) -> int:
    work = args.out or Path(tempfile.mkdtemp(prefix="prbf"))
    inputs = work / "in"
    if not inputs.exists():
        build_fuzz(inputs, args.n, args.seed, args.corpus)
    cfg = work / "cfg.yaml"
    cfg.write_text("ocr: {enabled: false}\nisolation: {page_timeout_s: 10, open_timeout_s: 20}\n"
                   "batch: {files_per_open_task: 32, pages_per_range: 64}\n")
    out = work / "out"
    with RayStartCluster(head_cpus=1, workers=[2]) as c:
        roots = lambda: [p.pid for p in [c.head, *c.workers] if p is not None]  # noqa: E731
        watch = Watch(roots)
        cmd = [sys.executable, "-m", "pagerouter.cli.main", "batch", str(inputs), "-o", str(out), "--config", str(cfg),
               "-q", "--ray", c.address]
        run = timed_batch(cmd, out, roots())
        watch.stop.set()
        wedged = busy_after(roots())
    from pagerouter.batch.journal import latest, read_records

    recs = {r["input"]: r for r in latest(read_records(out)).values()}
    n = sum(1 for _ in inputs.rglob("*.pdf"))
    statuses = Counter(r["status"] for r in recs.values())
    pages = Counter()
    seen = Counter()
    for r in recs.values():
        pages.update({k: v for k, v in (r.get("page_status") or {}).items()})
        errors = [r.get("error") or ""] + [e for e in _page_errors(out, r)]
        for e in errors:
            for key in ISOLATION_SEEN:
                if key in e:
                    seen[key] += 1
    slowest = max((r for r in recs.values() if r["status"] == "done"), key=lambda r: r["seconds"], default=None)
    per10k = {k: round(v * 10_000 / n, 1) for k, v in seen.items()}
    print(json.dumps({
        "inputs": n, "with_a_record": len(recs), "statuses": dict(statuses), "pages": dict(pages),
        "wall_s": round(run["wall_s"], 1), "inputs_per_s": round(n / run["wall_s"], 2),
        "cpu_s": round(run["cpu_s"], 1), "isolation_saw": dict(seen), "isolation_saw_per_10k_inputs": per10k,
        "slowest_input": {"input": slowest["input"], "stage_seconds": slowest["seconds"], "pages": slowest["pages"]}
        if slowest else None,
        "peak_rss_mb": {"all_cluster_processes": round(watch.peak_total), "one_process": round(watch.peak_one),
                        "one_isolation_worker": round(watch.peak_isolation)},
        "busy_after_the_run": wedged, "exit": run["exit"], "batch_errors": run.get("errors", []),
    }, indent=2))
    missing = n - len(recs)
    print(f"\n{missing} inputs without a record" if missing else "\nevery input has a record", flush=True)
    return 1 if missing or wedged else 0


def _page_errors(out: Path, rec: dict) -> list[str]:
    if rec.get("status") != "done" or not rec.get("page_status", {}).get("failed"):
        return []
    doc = json.loads((out / rec["outputs"][1]).read_text())
    return [p.get("error") or "" for p in doc["pages"] if p["status"] == "failed"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="what", required=True)
    t = sub.add_parser("throughput")
    t.add_argument("--docs", type=int, default=10)
    t.add_argument("--pages", type=int, default=8)
    t.add_argument("--scans", type=int, default=4)
    t.add_argument("--scans-per-file", type=int, default=0,
                   help="split the scanned pages into files of this many pages (default: one file)")
    t.add_argument("--modes", default="local,endpoint,node,ray")
    t.add_argument("--ray-env", default=None,
                   help="KEY=VALUE,... set for the cluster's `ray start` (raylet settings, not the driver's; default: "
                        "ray_driver.NODE_SETTINGS, as cluster.yaml starts its nodes; '' for Ray's own defaults)")
    t.add_argument("--pool-max", type=int, help="batch.cpu_pool.max_size for --ray (default: the config's)")
    t.add_argument("--files-per-open", type=int, help="batch.files_per_open_task for --ray (default: the config's)")
    t.add_argument("--warm", action="store_true",
                   help="start Ray Data's per-cluster detached actors with a one-row no-op job before timing --ray "
                        "(a long-lived cluster); without it the first run pays them")
    pl = sub.add_parser("plumbing")
    pl.add_argument("--scans", type=int, default=30, help="scanned pages in the one file")
    pl.add_argument("--repeat", type=int, default=3)
    f = sub.add_parser("fuzz")
    f.add_argument("--n", type=int, default=10_000)
    f.add_argument("--seed", type=int, default=1)
    f.add_argument("--out", type=Path, help="work dir (inputs are kept and reused if present)")
    f.add_argument("--corpus", type=Path, default=REPO.parent / "shared" / "corpus" / "real")
    if len(sys.argv) > 1 and sys.argv[1] == "noop-pipeline":  # run by `throughput --modes ...,noop`
        return noop_pipeline(sys.argv[2], *map(int, sys.argv[3:6]))
    args = ap.parse_args()
    return {"throughput": throughput, "plumbing": plumbing, "fuzz": fuzz}[args.what](args)


if __name__ == "__main__":
    sys.exit(main())
