"""The layer contract of ``core`` and the pages, checked by walking every import (ast).

``core`` is a stack of layers; a module may import from its own package and from lower layers
only, and never from a higher one: function-level (lazy) imports count too. Packages in one
layer do not import each other. The pages import only the studio services, the model, the errors
and the paths. ``docs/ARCHITECTURE.md`` explains the layers; this test is their definition.
"""

from __future__ import annotations

import ast
import re
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


# ------------------------------------------------------------------ the world contract
_WORLDISH = re.compile(r"(^|\.)\w*world$", re.IGNORECASE)
"""An expression that names a world: ``world``, ``self.world``, ``live.world``, ``loaded.world``."""
_AGENT_OR_CLIENT = re.compile(r"(^|\.)(agent|client|\w+_client|spec)$")
"""An expression that names an agent, an LLM client or a client's spec."""


def _probes(path: Path) -> list[tuple[int, str, bool]]:
    """Every ``getattr``/``hasattr`` call: (line, its object's source, commented?)."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    tree = ast.parse(text, filename=str(path))
    world_classes = [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.ClassDef)
        and any(
            (isinstance(b, ast.Name) and b.id in ("WorldBase", "HostWorld"))
            or (isinstance(b, ast.Name) and b.id.endswith("World"))
            for b in n.bases
        )
    ]
    in_world = {id(x) for c in world_classes for x in ast.walk(c)}
    out = []
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "hasattr")
            and node.args
        ):
            continue
        obj = ast.get_source_segment(text, node.args[0]) or ""
        if obj == "self" and id(node) in in_world:
            obj = "self (a world)"
        line = lines[node.lineno - 1]
        above = lines[node.lineno - 2].strip() if node.lineno > 1 else ""
        out.append((node.lineno, obj, "#" in line or "#" in above))
    return out


def test_no_world_is_probed_with_getattr_or_hasattr() -> None:
    """A world's surface is WorldBase: every hook exists, so nothing asks whether it does."""
    problems = [
        f"{path.relative_to(PROJECT_ROOT)}:{line} probes {obj}"
        for path in _core_files()
        for line, obj, _ in _probes(path)
        if _WORLDISH.search(obj) or obj == "self (a world)"
    ]
    assert not problems, "getattr/hasattr on a world:\n" + "\n".join(problems)


def test_agent_and_client_probes_say_why() -> None:
    """An agent or client is probed only where a third-party object forces it, commented."""
    problems = [
        f"{path.relative_to(PROJECT_ROOT)}:{line} probes {obj} without a comment"
        for path in _core_files()
        for line, obj, commented in _probes(path)
        if _AGENT_OR_CLIENT.search(obj) and not commented
    ]
    assert not problems, "\n".join(problems)


STRING_IMPORTS_IN = {"core/llm/env.py"}
"""The one declared place that imports a module by name: litellm, after its offline switches."""


def test_no_string_imports_outside_the_declared_place() -> None:
    """``importlib.import_module`` and friends hide an import from this test; one place may."""
    names = {"import_module", "__import__", "find_spec", "spec_from_file_location"}
    problems = []
    for path in _core_files():
        rel = str(path.relative_to(PROJECT_ROOT))
        if rel in STRING_IMPORTS_IN:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                f = node.func
                name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
                if name in names:
                    problems.append(f"{rel}:{node.lineno} calls {name}")
    assert not problems, "string imports outside core/llm/env.py:\n" + "\n".join(problems)


# ------------------------------------------------------------------ module-level state
_MUTABLE_CALLS = {
    "dict",
    "list",
    "set",
    "defaultdict",
    "OrderedDict",
    "Counter",
    "deque",
    "LockedLRU",
    "WeakKeyDictionary",
    "WeakValueDictionary",
}
_MUTATORS = {
    "append",
    "add",
    "update",
    "setdefault",
    "put",
    "clear",
    "pop",
    "popitem",
    "remove",
    "discard",
    "extend",
    "insert",
    "drop",
    "move_to_end",
}


def module_state(path: Path) -> set[str]:
    """Module-level names ``path`` changes at run time.

    A name bound at module level to a mutable container that the module writes (item
    assignment, a mutating method), or any name the module rebinds with ``global``.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    containers: set[str] = set()
    for node in tree.body:
        value: ast.expr | None = None
        targets: list[str] = []
        if isinstance(node, ast.Assign):
            targets = [t.id for t in node.targets if isinstance(t, ast.Name)]
            value = node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            targets, value = [node.target.id], node.value
        literal = (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp)
        if isinstance(value, literal) or (
            isinstance(value, ast.Call)
            and (
                value.func.attr
                if isinstance(value.func, ast.Attribute)
                else getattr(value.func, "id", "")
            )
            in _MUTABLE_CALLS
        ):
            containers.update(targets)
    state: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Global):
            state.update(node.names)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id in containers
            and node.func.attr in _MUTATORS
        ):
            state.add(node.func.value.id)
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.Delete)):
            targets_ = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
            for t in targets_:
                if (
                    isinstance(t, ast.Subscript)
                    and isinstance(t.value, ast.Name)
                    and t.value.id in containers
                ):
                    state.add(t.value.id)
    return state


def declared_state() -> set[str]:
    """The ``core/…py: NAME`` rows of docs/ARCHITECTURE.md § Shared state."""
    text = (PROJECT_ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    return set(re.findall(r"^\| `(core/[\w/]+\.py: \w+)` \|", text, flags=re.MULTILINE))


def test_module_level_state_is_declared() -> None:
    found = {
        f"{path.relative_to(PROJECT_ROOT)}: {name}"
        for path in _core_files()
        for name in module_state(path)
    }
    declared = declared_state()
    assert not found - declared, (
        "module-level mutable state not declared in docs/ARCHITECTURE.md § Shared state "
        "(move it into an object or a world's memo, or declare its owner and bound):\n"
        + "\n".join(sorted(found - declared))
    )
    assert not declared - found, "declared state that no longer exists:\n" + "\n".join(
        sorted(declared - found)
    )


def test_the_state_finder_sees_each_kind_of_write(tmp_path: Path) -> None:
    src = tmp_path / "m.py"
    src.write_text(
        "A = {}\nB: list[int] = []\nC = set()\nD = {}\nE = None\nF = {'k': 1}\n"
        "def f():\n    global E\n    A['x'] = 1\n    B.append(1)\n    C.add(1)\n"
        "    E = 2\n    return F['k'], D.get('x')\n"
    )
    assert module_state(src) == {"A", "B", "C", "E"}
