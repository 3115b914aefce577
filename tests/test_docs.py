"""Every command in README.md and docs/*.md runs as written, and the generated pages match the code.

The ```bash blocks are read from the files, so a doc that drifts from the CLI fails here. Each
block runs whole (`bash -e`, as a user pasting it would, variables kept within the block) in a
folder that looks like the repository root to its relative paths (`samples/`, `configs/`,
`scripts/`), the blocks of one file in order and in one folder (a later block reads what an
earlier one wrote). A ```text block right after a ```bash block is that block's stdout, compared
line by line. Every ```python block runs as a script in such a folder, its output compared the
same way.

Blocks that talk to `http://127.0.0.1:8000` or `127.0.0.1:9000` run against a real
`pagerouter serve` on those ports (tests/serve_fixtures.py's `pagerouter_serve_process`; run this
file under `flock /tmp/pagerouter-ray.lock`, it starts Ray). A few commands cannot run on a test
machine or are run by another test: `SHOWN_NOT_RUN` and `RUN_ELSEWHERE` name each with the reason,
and `test_every_command_is_run_or_listed` fails on any command that is neither run nor listed.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
DOC_FILES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
SERVER_ADDRESSES = ("127.0.0.1:8000", "127.0.0.1:9000")
SERVE_LINE = "pagerouter serve --http-port 8000 --grpc-port 9000"

# command line -> why it is shown but not run by this file
SHOWN_NOT_RUN = {
    'pip install -e .                 # convert, triage, batch (local), review, bench: no Ray':
        "installs into the environment the tests run in; tests/test_packaging.py installs the built "
        "wheel into a fresh venv and checks the client extra imports no Ray",
    'pip install -e ".[client]"       # + pagerouter client, batch --endpoint/--grpc, clients/: no Ray':
        "as above",
    'pip install -e ".[serve]"        # + pagerouter serve, batch --ray (Ray Serve, Ray Data); includes client':
        "as above",
    'pip install -e ".[serve,gpu]"': "the CUDA vLLM: needs a GPU machine",
    "serve run configs/serve-gpu.yaml      # or: pagerouter serve --config configs/serve-gpu.yaml":
        "needs a GPU and the model weights",
    "ray job submit --address http://127.0.0.1:8265 --working-dir . -- \\\n"
    "    pagerouter batch /data/in -o /data/out --endpoint http://127.0.0.1:8000   # the cluster's Serve graph":
        "needs a Ray cluster with its dashboard's job server and a Serve deployment on it",
    "ray job submit --address http://127.0.0.1:8265 -- pagerouter batch /data/in -o /data/out --jobs 4   # converts in the job":
        "needs a Ray cluster with its dashboard's job server",
    "ray up cluster.yaml": "launches machines in a cloud account",
    "ray exec cluster.yaml 'cd ~/pagerouter && serve deploy configs/serve.yaml'": "needs the cluster of `ray up`",
}

# command line -> the test that runs it
RUN_ELSEWHERE = {
    'pip install -e ".[serve]" && pagerouter convert samples/mixed-sample.pdf':
        "CI (.ci/run runs scripts/test.sh, which installs the project); the conversion: tests/test_sample.py",
    "bash scripts/test.sh": "CI (.ci/run)",
    "python scripts/build_tiny_vlm.py models/tiny-qwen2vl": "tests/test_vlm_readme.py (verbatim; vlm-cpu extra)",
    "pagerouter convert samples/mixed-sample.pdf --pages 2 --config configs/vlm-cpu.yaml -o out --format both":
        "tests/test_vlm_readme.py",
    "python -c \"import json; p = json.load(open('out/mixed-sample.json'))['pages'][0]; print(p['status'], "
    "p['flags']); [print(a['tier'], a['number'], a['temperature'], a['finish_reason'], a['rejected_because'][0]) "
    "for a in p['attempts']]\"": "tests/test_vlm_readme.py",
    "pagerouter batch 's3://bucket/pdfs/**/*.pdf' -o s3://bucket/out/ --ray 10.0.0.1:6379 --journal-dir ./state":
        "tests/test_batch_ray_readme.py (a Ray cluster; the bucket, folders and address swapped for real ones)",
    "pagerouter batch /data/in -o /data/out --ray          # RAY_ADDRESS, a cluster on this machine, else a local one":
        "tests/test_batch_ray_readme.py",
    SERVE_LINE: "started by this file's server fixture (the same ports; stopped with Ctrl-C)",
}


@dataclass
class Block:
    path: Path
    lang: str
    text: str
    line: int
    output: str | None = None  # the ```text block right after it: its expected stdout

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(REPO)}:{self.line}"

    def commands(self) -> list[str]:
        """Its command lines (continuations joined with their backslash-newline), comments and blank
        lines left out."""
        out, cur = [], ""
        for line in self.text.splitlines():
            if not cur and (not line.strip() or line.lstrip().startswith("#")):
                continue
            cur = f"{cur}\n{line}" if cur else line
            if not line.endswith("\\"):
                out.append(cur)
                cur = ""
        return out + ([cur] if cur else [])

    @property
    def served(self) -> bool:
        return any(a in self.text for a in SERVER_ADDRESSES)


FENCE = re.compile(r"^(\s*)```(\w*)\s*$")


def blocks(path: Path) -> list[Block]:
    """The fenced blocks of a Markdown file (indented ones in lists too), each ```bash or ```python
    block with the ```text block that directly follows it as its output."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found: list[tuple[str, str, int, int]] = []  # lang, text, first line, line after the fence
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, lang, start = m.group(1), m.group(2), i
        i += 1
        body = []
        while i < len(lines) and lines[i].strip() != "```":
            body.append(lines[i].removeprefix(indent))
            i += 1
        found.append((lang, "\n".join(body) + "\n", start + 1, i + 1))
        i += 1
    out: list[Block] = []
    for n, (lang, text, line, end) in enumerate(found):
        if lang == "text" and out and out[-1].output is None and n > 0:
            prev_end = found[n - 1][3]
            if found[n - 1][0] in ("bash", "python") and not "".join(lines[prev_end:line - 1]).strip():
                out[-1].output = text
                continue
        if lang in ("bash", "python"):
            out.append(Block(path, lang, text, line))
    return out


def all_blocks(lang: str) -> list[Block]:
    return [b for p in DOC_FILES for b in blocks(p) if b.lang == lang]


def workdir(tmp: Path) -> Path:
    """A folder that looks like the repository root to the docs' relative paths."""
    for name in ("samples", "configs", "scripts"):
        (tmp / name).symlink_to(REPO / name)
    return tmp


def env() -> dict[str, str]:
    # this checkout first (the installed package may be another checkout); this interpreter's
    # `python` and `pagerouter` first on PATH
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
            "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
            "COLUMNS": "100"}


def same_output(actual: str, expected: str) -> bool:
    def norm(text: str) -> list[str]:
        return [ln.rstrip() for ln in text.strip("\n").splitlines()]

    return norm(actual) == norm(expected)


def run_block(block: Block, cwd: Path, extra_env: dict | None = None, timeout: float = 300) -> None:
    if block.lang == "bash":
        cmd = ["bash", "-e", "-c", block.text]
    else:
        script = cwd / f"block_{block.line}.py"
        script.write_text(block.text, encoding="utf-8")
        cmd = [sys.executable, str(script)]
    r = subprocess.run(cmd, check=False, cwd=cwd, capture_output=True, text=True, timeout=timeout, env={**env(), **(extra_env or {})})
    assert r.returncode == 0, f"{block.where} exited {r.returncode}:\n{block.text}\n{r.stderr[-3000:]}"
    if block.output is not None:
        assert same_output(r.stdout, block.output), (
            f"{block.where}: the output shown is not what it prints\n--- shown\n{block.output}\n--- printed\n{r.stdout}")


def runnable(block: Block) -> bool:
    cmds = block.commands()
    listed = [c for c in cmds if c in SHOWN_NOT_RUN or c in RUN_ELSEWHERE]
    assert not listed or len(listed) == len(cmds), (
        f"{block.where}: a block mixes run and listed commands; put the listed ones in a block of their own")
    return not listed


def local_blocks(path: Path) -> list[Block]:
    return [b for b in blocks(path) if b.lang == "bash" and runnable(b) and not b.served]


def _gen_docs():
    spec = importlib.util.spec_from_file_location("gen_docs", REPO / "scripts" / "gen_docs.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# --- the lists stay honest ---------------------------------------------------------------------

def test_every_command_is_run_or_listed():
    """Each listed command is still in the docs (a stale entry hides nothing), each block either
    runs or is listed as a whole, and the served blocks need nothing but the server."""
    shown = {c for b in all_blocks("bash") for c in b.commands()}
    for listed in (SHOWN_NOT_RUN, RUN_ELSEWHERE):
        assert not set(listed) - shown, f"listed but no longer in the docs: {set(listed) - shown}"
    for b in all_blocks("bash"):
        runnable(b)
    assert [b for b in all_blocks("bash") if b.served and runnable(b)], "no served command found"
    for path in DOC_FILES:  # a command cannot hide in a block without a language
        opening = True
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            m = FENCE.match(line)
            if m:
                assert not opening or m.group(2), f"{path.name}:{n}: a code block without a language"
                opening = not opening


def test_the_docs_copies_of_readme_blocks_are_the_same_lines():
    """docs/vlm.md and docs/batch.md repeat the README's CPU VLM steps and `--ray` lines, which
    tests/test_vlm_readme.py and tests/test_batch_ray_readme.py run from the README."""
    readme = [c for b in blocks(REPO / "README.md") if b.lang == "bash" for c in b.commands()]
    for name in ("vlm.md", "batch.md"):
        for b in blocks(REPO / "docs" / name):
            for c in b.commands():
                if c in RUN_ELSEWHERE and c != SERVE_LINE:
                    assert c in readme, f"docs/{name}: {c!r} differs from the README's copy"


def test_block_parser_reads_outputs_and_indented_blocks(tmp_path):
    md = tmp_path / "x.md"
    md.write_text("a\n\n```bash\necho hi \\\n  there\n# comment\n```\n\n```text\nhi there\n```\n\n"
                  "1. item\n\n   ```bash\n   echo two\n   ```\n\nprose\n\n```text\nnot output\n```\n")
    got = blocks(md)
    assert [(b.lang, b.commands(), b.output) for b in got] == [
        ("bash", ["echo hi \\\n  there"], "hi there\n"), ("bash", ["echo two"], None)]


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation but `-` and `_` dropped, spaces to `-`."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_links_between_the_pages_resolve():
    """Every relative link of README.md and docs/*.md names a file that exists, and its #anchor a
    heading of that file."""
    for path in DOC_FILES:
        text = path.read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+://", target):
                continue
            file, _, anchor = target.partition("#")
            dest = (path.parent / file).resolve() if file else path
            assert dest.exists(), f"{path.name}: link to a missing file {target}"
            if anchor:
                heads = [_slug(h) for h in re.findall(r"^#+ (.+)$", dest.read_text(encoding="utf-8"), re.MULTILINE)]
                assert anchor in heads, f"{path.name}: no heading for #{anchor} in {dest.name}"


# --- generated pages ---------------------------------------------------------------------------

def test_cli_reference_is_generated_from_the_help():
    gen = _gen_docs()
    assert (REPO / "docs" / "cli.md").read_text(encoding="utf-8") == gen.render_cli(), (
        "docs/cli.md is stale: run python scripts/gen_docs.py")


def test_configuration_reference_is_generated_from_the_config():
    gen = _gen_docs()
    text = (REPO / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert text == gen.render_config(), "docs/configuration.md is stale: run python scripts/gen_docs.py"
    assert str(Path.home()) not in text, "a default computed on the machine that wrote the file"


def test_every_config_field_is_in_the_configuration_reference():
    from pydantic import BaseModel

    from pagerouter.config import PagerouterConfig

    text = (REPO / "docs" / "configuration.md").read_text(encoding="utf-8")

    def keys(model, prefix):
        for name, field in model.model_fields.items():
            if isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel):
                yield from keys(field.annotation, f"{prefix}{name}.")
            else:
                yield f"{prefix}{name}", field.description

    for key, description in keys(PagerouterConfig, ""):
        row = next((ln for ln in text.splitlines() if ln.startswith(f"| `{key}` |")), None)
        assert row, key
        assert description and " ".join(description.split()).replace("|", "\\|") in row, key


def test_the_example_check_ignores_a_score_s_last_bits_and_sees_a_real_change():
    """Two machines gave one score 0.3697994521539343 and 0.36979945215393517 on the same tree;
    the check holds on both, and still fails when a score really moves."""
    gen = _gen_docs()

    def doc(gain):
        return json.dumps({"pages": [{"triage": {"scores": {"char_model_context_gain.Latin": gain}},
                                      "timings": {"triage": 0.02}}]})

    assert gen.without_timings(doc(0.3697994521539343)) == gen.without_timings(doc(0.36979945215393517))
    assert gen.without_timings(doc(0.3697994521539343)) != gen.without_timings(doc(0.3697994521))


@pytest.mark.slow
def test_output_example_is_what_the_cli_prints(tmp_path):
    """docs/output.md's example, against `pagerouter convert ... --format json` run now (timings
    are measured: their keys are compared, not their values)."""
    gen = _gen_docs()
    example = gen.example_in((REPO / "docs" / "output.md").read_text(encoding="utf-8"))
    r = subprocess.run(["pagerouter", "convert", "samples/mixed-sample.pdf", "--pages", "1", "--format", "json", "-q"],
                       check=False, cwd=workdir(tmp_path), capture_output=True, text=True, timeout=300, env=env())
    assert r.returncode == 0, r.stderr
    assert gen.without_timings(example) == gen.without_timings(r.stdout)
    assert json.loads(example)["pages"][0]["timings"], "the example shows its timings"


# --- the commands, run ------------------------------------------------------------------------

LOCAL_FILES = [p for p in DOC_FILES if local_blocks(p)]


@pytest.mark.slow
@pytest.mark.parametrize("path", LOCAL_FILES, ids=[p.name for p in LOCAL_FILES])
def test_shell_blocks_run_as_written(path, tmp_path):
    cwd = workdir(tmp_path)
    for block in local_blocks(path):
        run_block(block, cwd)


PY_BLOCKS = all_blocks("python")


@pytest.mark.slow
@pytest.mark.parametrize("block", PY_BLOCKS, ids=[f"{b.path.name}:{b.line}" for b in PY_BLOCKS])
def test_python_blocks_run(block, tmp_path):
    run_block(block, workdir(tmp_path))


def _port_free(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) != 0


@pytest.fixture(scope="module")
def documented_server(tmp_path_factory):
    """`pagerouter serve` on the documented ports 8000/9000 with the default config."""
    from tests.serve_fixtures import pagerouter_serve_process

    busy = [p for p in (8000, 9000) if not _port_free(p)]
    assert not busy, f"port(s) {busy} in use: the documented commands need them free"
    d = tmp_path_factory.mktemp("docs-serve")
    cfg = d / "pagerouter.yaml"
    cfg.write_text(yaml.safe_dump({}))  # the defaults, as the documented command runs
    ray_tmp = tempfile.mkdtemp(prefix="prdocs", dir="/tmp")
    environ = {**env(), "RAY_ADDRESS": "local", "RAY_AUTH_MODE": "disabled", "RAY_TMPDIR": ray_tmp}
    environ.pop("PAGEROUTER_API_KEY", None)
    environ.pop("PAGEROUTER_API_KEY_FILE", None)
    try:
        with pagerouter_serve_process(d, cfg, environ, 8000, 9000, ray_tmp) as proc:
            yield proc
    finally:
        shutil.rmtree(ray_tmp, ignore_errors=True)


SERVED_BLOCKS = [b for b in all_blocks("bash") if b.served and runnable(b)]


@pytest.mark.slow
@pytest.mark.serve
def test_served_blocks_run_as_written(documented_server, tmp_path):
    """The curl, client, job and batch --endpoint blocks of every file, in order, against the server."""
    cwd = workdir(tmp_path)
    for block in SERVED_BLOCKS:
        run_block(block, cwd)
