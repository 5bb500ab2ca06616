"""The packages form one-way layers: a module imports only its own layer or lower ones.

Read bottom-up, the layers follow a signal: the shared vocabulary, the pure lifecycle,
configuration, tables and file formats, observability, the durable engine, job runtime and
knowledge base, the service layer users call, job bodies (workers), and the entry points
(HTTP, CLI, console, Celery composition, demo). `orchestrator.testing` is for tests only.
"""

from __future__ import annotations

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: Lowest first. Modules in one layer may import each other.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("orchestrator.contracts",),
    ("orchestrator.lifecycle",),
    ("orchestrator.config",),
    ("orchestrator.db", "orchestrator.formats"),
    ("orchestrator.observability",),
    ("orchestrator.engine",),
    ("orchestrator.jobs", "orchestrator.knowledge", "orchestrator.catalog"),
    ("orchestrator.service", "orchestrator.notifications", "orchestrator.sweeps"),
    ("workers",),
    (
        "orchestrator.api",
        "orchestrator.cli",
        "orchestrator.console",
        "orchestrator.runtime",
        "orchestrator.demo",
    ),
    ("orchestrator.testing",),
)


def layer_of(module: str) -> int | None:
    for index, packages in enumerate(LAYERS):
        if any(module == p or module.startswith(p + ".") for p in packages):
            return index
    return None


def modules() -> list[tuple[str, Path]]:
    found = []
    for top in ("orchestrator", "workers"):
        for path in sorted((ROOT / top).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found.append((name, path))
    return found


def imports_of(path: Path) -> set[str]:
    """Every module named by an import statement, wherever it stands in the file."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return {n for n in names if n.split(".")[0] in ("orchestrator", "workers")}


def violations() -> list[str]:
    found = []
    for name, path in modules():
        own = layer_of(name)
        if own is None:
            continue
        for imported in imports_of(path):
            theirs = layer_of(imported)
            if theirs is not None and theirs > own:
                found.append(f"{name} (layer {own}) imports {imported} (layer {theirs})")
    return sorted(found)


def test_every_package_has_a_layer() -> None:
    unplaced = [
        name
        for name, _ in modules()
        if layer_of(name) is None and name not in ("orchestrator", "orchestrator.__main__")
    ]
    assert unplaced == []


def test_no_module_imports_a_higher_layer() -> None:
    assert violations() == []


def test_workers_never_import_entry_points() -> None:
    entry = ("orchestrator.api", "orchestrator.cli", "orchestrator.console")
    bad = [
        f"{name} imports {imported}"
        for name, path in modules()
        if name.startswith("workers")
        for imported in imports_of(path)
        if imported.startswith(entry)
    ]
    assert bad == []


def test_product_code_never_imports_testing() -> None:
    bad = [
        f"{name} imports {imported}"
        for name, path in modules()
        if not name.startswith("orchestrator.testing")
        for imported in imports_of(path)
        if imported.startswith("orchestrator.testing")
    ]
    assert bad == []


def test_no_module_imports_another_modules_private_names() -> None:
    bad = []
    for name, path in modules():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                bad += [
                    f"{name}: from {node.module} import {a.name}"
                    for a in node.names
                    if a.name.startswith("_")
                    and node.module.split(".")[0] in ("orchestrator", "workers")
                ]
    assert bad == []


def package_of(module: str) -> str:
    """The top-level package a module belongs to: `orchestrator.X`, or `workers`."""
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "orchestrator" and len(parts) > 1 else parts[0]


def two_way_imports() -> list[str]:
    edges: dict[tuple[str, str], set[str]] = {}
    for name, path in modules():
        for imported in imports_of(path):
            pair = (package_of(name), package_of(imported))
            if pair[0] != pair[1]:
                edges.setdefault(pair, set()).add(f"{name} -> {imported}")
    return sorted(
        f"{a} <-> {b}: {sorted(edges[a, b])[0]}; {sorted(edges[b, a])[0]}"
        for a, b in edges
        if a < b and (b, a) in edges
    )


def test_no_two_packages_import_each_other() -> None:
    """Within one layer too: between two packages imports go one way only."""
    assert two_way_imports() == []


@pytest.mark.parametrize("package", ["orchestrator", "workers"])
def test_no_import_cycle_between_modules(package: str) -> None:
    known = dict(modules())
    graph = {
        name: {i for i in imports_of(path) if i in known and not name.startswith(i + ".")}
        for name, path in known.items()
        if name.startswith(package)
    }
    try:
        TopologicalSorter(graph).prepare()
    except CycleError as error:
        pytest.fail(f"import cycle: {' -> '.join(error.args[1])}")
