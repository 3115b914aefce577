"""The package's layout shows the flow, and its imports go one way.

The root keeps `__init__.py`, `__main__.py` (`python -m pagerouter`) and `model.py`; every other module lives in a package named for
its stage. Packages are ranked from the shared ground up (the data model, then what every stage
shares, intake, the readers, the per-page flow, the converter, the front ends): a module may
import from its own package or from a package of a lower or equal rank, and the packages'
import graph has no cycles. Imports inside functions count too: a lazy import that reaches
up is still a dependency upwards.
"""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "pagerouter"

# lowest first; packages of one rank may import each other as long as no cycle forms
RANKS: list[set[str]] = [
    {"model"},
    {"common"},
    {"config"},
    {"intake", "layout", "render"},
    {"textlayer"},
    {"ocr"},
    {"vlm", "triage"},
    {"flow"},
    {"isolation"},
    {"convert"},
    {"wire", "jobs", "bench", "service", "review"},
    {"batch"},
    {"cli"},
    {"__main__"},  # `python -m pagerouter`: the CLI, the top front end
]
RANK = {name: i for i, names in enumerate(RANKS) for name in names}


def _module_name(path: Path, pkg: Path = PKG) -> tuple[str, bool]:
    parts = list(path.relative_to(pkg.parent).with_suffix("").parts)
    is_pkg = parts[-1] == "__init__"
    return ".".join(parts[:-1] if is_pkg else parts), is_pkg


def _imports(path: Path, pkg: Path = PKG) -> set[str]:
    """The pagerouter modules `path` imports (module level and inside functions)."""
    mod, is_pkg = _module_name(path, pkg)
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = mod.split(".") if is_pkg else mod.split(".")[:-1]
                if node.level > 1:
                    base = base[: -(node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.startswith("pagerouter"):
                found.add(target)
                found.update(f"{target}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("pagerouter"))
    return found


def _package(module: str) -> str | None:
    """`pagerouter.X...` -> X (the package, or `model`); None for the root package itself."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def _package_edges(pkg: Path = PKG) -> dict[str, dict[str, list[str]]]:
    edges: dict[str, dict[str, list[str]]] = {}
    for path in pkg.rglob("*.py"):
        mod, _ = _module_name(path, pkg)
        src = _package(mod)
        for target in _imports(path, pkg):
            dst = _package(target)
            if dst is None or dst == src or not (pkg / dst).exists() and not (pkg / f"{dst}.py").exists():
                continue  # the root itself, the own package, or a name imported from a module
            edges.setdefault(src, {}).setdefault(dst, []).append(f"{mod} -> {target}")
    return edges


def test_the_package_root_keeps_only_init_main_and_model():
    loose = sorted(p.name for p in PKG.glob("*.py"))
    assert loose == ["__init__.py", "__main__.py", "model.py"], loose


def test_every_package_has_a_rank():
    packages = {p.name for p in PKG.iterdir() if (p / "__init__.py").exists()}
    assert packages - RANK.keys() == set(), "rank the new package in RANKS"


def test_no_module_imports_from_a_package_above_its_own():
    upward = [
        f"{edge} (rank {RANK[src]} imports rank {RANK[dst]})"
        for src, dsts in _package_edges().items()
        for dst, lines in dsts.items()
        if RANK[dst] > RANK[src]
        for edge in lines
    ]
    assert upward == []


def test_the_packages_import_graph_has_no_cycles():
    edges = {src: set(dsts) for src, dsts in _package_edges().items()}
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    cycles: list[list[str]] = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append(path[path.index(nxt):] + [node, nxt] if nxt in path else [node, nxt])
            elif nxt not in state:
                visit(nxt, path + [node])
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            visit(node, [])
    assert cycles == []


def test_the_checker_sees_an_upward_import(tmp_path):
    """The rule can fail: a lazy import from `cli` inside `common` is reported."""
    pkg = tmp_path / "pagerouter"
    for name in ("common", "cli"):
        (pkg / name).mkdir(parents=True)
        (pkg / name / "__init__.py").write_text("", encoding="utf-8")
    (pkg / "common" / "probe.py").write_text("def f():\n    from ..cli import main\n", encoding="utf-8")
    edges = _package_edges(pkg)
    assert list(edges) == ["common"] and list(edges["common"]) == ["cli"]
    assert "pagerouter.common.probe -> pagerouter.cli" in edges["common"]["cli"]
