"""The layer contract of ``core`` and the pages, checked by walking every import (ast).

``core`` is a stack of layers; a module may import from its own package and from lower layers
only, and never from a higher one: function-level (lazy) imports count too. Packages in one
layer do not import each other. The pages import only the studio services, the model, the errors
and the paths. ``docs/ARCHITECTURE.md`` explains the layers; this test is their definition.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

from core.paths import PROJECT_ROOT

LAYERS: list[set[str]] = [
    {"core", "core.errors"},
    {"core.settings"},
    {"core.paths"},
    {"core.model"},
    {"core.store"},
    {"core.llm", "core.envs"},
    {"core.protocol", "core.graph"},
    {"core.agents", "core.faults"},
    {"core.engine"},
    {"core.grip", "core.construction", "core.studies"},
    {"core.runner"},
    {"core.studio"},
    {"core.cli"},
]
"""Lowest first. Each entry is a unit: ``core.X`` (a top-level module or a package)."""

_CORE_PACKAGE_NAMES = {"core.__version__", "core.OFFLINE_SWITCHES", "core.set_offline_switches"}
"""Names ``core/__init__.py`` defines (``from core import __version__``): layer 0."""

PAGE_ALLOWED = {"core.studio", "core.model", "core.errors", "core.paths"}


def _unit(module: str) -> str:
    if module in _CORE_PACKAGE_NAMES:
        return "core"
    parts = module.split(".")
    return ".".join(parts[:2])


def _layer_of(unit: str) -> int:
    for i, units in enumerate(LAYERS):
        if unit in units:
            return i
    raise AssertionError(f"{unit} is in no layer: add it to LAYERS (and docs/ARCHITECTURE.md)")


def _module_name(path: Path) -> str:
    rel = path.relative_to(PROJECT_ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> list[tuple[int, str]]:
    """Every ``core`` module ``path`` imports (module level and inside functions)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    out: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "core":
                out.extend((node.lineno, f"core.{a.name}") for a in node.names)
            elif node.module.startswith("core."):
                out.append((node.lineno, node.module))
        elif isinstance(node, ast.Import):
            out.extend((node.lineno, a.name) for a in node.names if a.name.startswith("core"))
    return out


def _core_files() -> list[Path]:
    return sorted((PROJECT_ROOT / "core").rglob("*.py"))


def test_every_core_unit_has_a_layer() -> None:
    for path in _core_files():
        _layer_of(_unit(_module_name(path)))


def test_core_never_imports_upward_or_sideways() -> None:
    problems = []
    for path in _core_files():
        src = _unit(_module_name(path))
        mine = _layer_of(src)
        for line, target in _imports(path):
            dst = _unit(target)
            if dst == src or target in _CORE_PACKAGE_NAMES:
                continue
            theirs = _layer_of(dst)
            if theirs > mine or (theirs == mine and dst != src):
                rel = path.relative_to(PROJECT_ROOT)
                problems.append(
                    f"{rel}:{line} ({src}, layer {mine}) imports {target} (layer {theirs})"
                )
    assert not problems, "layer violations:\n" + "\n".join(problems)


def test_no_import_cycles_between_core_units() -> None:
    graph: dict[str, set[str]] = defaultdict(set)
    for path in _core_files():
        src = _unit(_module_name(path))
        for _, target in _imports(path):
            dst = _unit(target)
            if dst != src and dst != "core":
                graph[src].add(dst)
    seen: dict[str, int] = {}

    def visit(node: str, stack: list[str]) -> None:
        seen[node] = 1
        for nxt in sorted(graph[node]):
            if seen.get(nxt) == 1:
                cycle = stack[stack.index(nxt) :] + [nxt] if nxt in stack else [node, nxt]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if nxt not in seen:
                visit(nxt, [*stack, nxt])
        seen[node] = 2

    for unit in sorted(graph):
        if unit not in seen:
            visit(unit, [unit])


def test_pages_import_only_the_studio_model_errors_and_paths() -> None:
    files = [PROJECT_ROOT / "app.py", *sorted((PROJECT_ROOT / "pages").rglob("*.py"))]
    problems = []
    for path in files:
        for line, target in _imports(path):
            if _unit(target) not in PAGE_ALLOWED:
                problems.append(f"{path.relative_to(PROJECT_ROOT)}:{line} imports {target}")
    assert not problems, "pages reach past the studio services:\n" + "\n".join(problems)


UNIQUE_NAMES_IN = ("studio", "engine", "runner", "construction")
"""Packages (with core's top level) whose module names must be unique among themselves: the
service and orchestration layers, where a second ``play.py`` once hid which one a page used."""


def test_no_two_service_or_engine_modules_share_a_name() -> None:
    names: dict[str, list[str]] = defaultdict(list)
    for path in _core_files():
        rel = path.relative_to(PROJECT_ROOT / "core")
        if path.name == "__init__.py" or (
            len(rel.parts) > 1 and rel.parts[0] not in UNIQUE_NAMES_IN
        ):
            continue
        names[path.name].append(str(rel))
    dupes = {n: p for n, p in names.items() if len(p) > 1}
    assert not dupes, f"module names used twice: {dupes}"
