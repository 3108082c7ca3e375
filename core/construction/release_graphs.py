"""Release graph files converted into canonical intent graphs.

A release graph (τ² ``graphs/``/``trees/`` files, WebShop ``tree_*.json``) is one JSON object
with ``root``, ``children`` and ``edges``. :func:`convert_graph` turns it into a
:class:`ReleaseGraph`: canonical nodes (τ² nodes from their recipes, see
:mod:`core.construction.release_nodes`), edges with their shift operator and delta text, and,
for WebShop, the product each node names. Malformed input raises :class:`ConfigError` naming
the file and the field. :mod:`core.construction.release` reads a whole release with it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.construction.release_nodes import SlotMap, align, conditions_of, map_root, recipe_calls
from core.errors import ConfigError
from core.model.base import canonical_json
from core.model.intent import Condition, Edge, GroundTruth, Intent, IntentGraph, ShiftOperator
from core.model.shift import classify_shift

_OPS = {
    "REFINEMENT": ShiftOperator.REFINE,
    "RELAXATION": ShiftOperator.RELAX,
    "SUBSTITUTION": ShiftOperator.SUBSTITUTE,
    "PIVOT": ShiftOperator.PIVOT,
}


def need(obj: Any, key: str, typ: type | tuple[type, ...], file: Path, path: str) -> Any:
    """``obj[key]`` checked to be a ``typ`` (ConfigError naming the file and field otherwise)."""
    if not isinstance(obj, dict):
        raise ConfigError("expected an object", file=file, field=path or "<root>")
    if key not in obj:
        raise ConfigError("required field is missing", file=file, field=f"{path}.{key}".lstrip("."))
    v = obj[key]
    if not isinstance(v, typ):
        names = typ.__name__ if isinstance(typ, type) else "/".join(t.__name__ for t in typ)
        raise ConfigError(f"must be {names}", file=file, field=f"{path}.{key}".lstrip("."))
    return v


def conditions_from(raw: Any, file: Path, path: str) -> list[Condition]:
    """Release ``[slot, op, value]`` triples as conditions (ConfigError on a malformed one)."""
    if not isinstance(raw, list):
        raise ConfigError("must be a list of [slot, op, value]", file=file, field=path)
    out = []
    for i, c in enumerate(raw):
        if not (isinstance(c, list) and len(c) == 3 and isinstance(c[0], str)):
            raise ConfigError("must be [slot, op, value]", file=file, field=f"{path}[{i}]")
        op = c[1] if c[1] in ("=", "<=", ">=", "!=", "contains") else None
        if op is None or not isinstance(c[2], (str, int, float, bool)):
            raise ConfigError(f"bad condition {c!r}", file=file, field=f"{path}[{i}]")
        out.append(Condition(slot=c[0], op=op, value=c[2]))
    return out


def ground_truth_from(raw: Any, file: Path, path: str) -> GroundTruth | None:
    """A release ground truth in this engine's format (τ² state hashes as ``[hash]``)."""
    if raw is None:
        return None
    kind = need(raw, "kind", str, file, path)
    value = need(raw, "value", (str, list), file, path)
    if kind not in ("purchaseset", "statehash", "rowset", "scalar"):
        raise ConfigError(f"unknown ground-truth kind {kind!r}", file=file, field=f"{path}.kind")
    rows = [value] if isinstance(value, str) else [str(v) for v in value]
    if kind == "statehash":
        rows = [state_hash_text(r) for r in rows]
    return GroundTruth(kind=kind, value=sorted(rows))


def _benchmark_of_graph(g: dict[str, Any], file: Path) -> str:
    return str(need(g, "adapter", str, file, ""))


def _env_of_graph(g: dict[str, Any], bench: str) -> str:
    raw = g.get("env_spec")
    spec: dict[str, Any] = raw if isinstance(raw, dict) else {}
    if bench == "webshop":
        return str(spec.get("cluster") or g.get("env_id") or "webshop")
    if bench.startswith("tau2_"):
        return str(spec.get("domain") or bench.split("_", 1)[1])
    return str(g.get("env_id") or bench)


def _task_of(raw: dict[str, Any]) -> str | None:
    """The host task a node comes from (the first part of ``source_record``), if named."""
    rec = raw.get("source_record")
    return str(rec).split("+", 1)[0] if rec not in (None, "") else None


def _base_text(raw: dict[str, Any]) -> str:
    base_raw = raw.get("base")
    return canonical_json(base_raw) if isinstance(base_raw, (dict, list)) else str(base_raw)


def _release_node(raw: Any, bench: str, env: str, file: Path, path: str) -> tuple[str, Intent]:
    """A node kept as the release states it (WebShop; τ² nodes without a recipe)."""
    old_id = need(raw, "intent_id", str, file, path)
    conds = conditions_from(need(raw, "conditions", list, file, path), file, f"{path}.conditions")
    if bench.startswith("tau2_"):
        conds = SlotMap(next_index=_max_index(conds) + 1).translate(conds)
    src = raw.get("source_record")
    intent = Intent.build(
        benchmark=bench,
        env_id=env,
        base=_base_text(raw),
        conditions=conds,
        ground_truth=ground_truth_from(raw.get("ground_truth"), file, f"{path}.ground_truth"),
        is_seed=bool(raw.get("is_seed", False)),
        source_record=str(src) if src is not None else None,
    )
    return old_id, intent


def _max_index(conds: list[Condition]) -> int:
    parts = (c.slot.split(":") for c in conds)
    return max(
        (int(p[1]) for p in parts if len(p) > 1 and p[0] == "arg" and p[1].isdigit()), default=-1
    )


def _diff_text(a: Intent, b: Intent, op: ShiftOperator) -> str:
    """A readable delta between two converted nodes (the runtime recomputes its own)."""
    rel = classify_shift(a, b)
    if rel is not None and rel.operator is op:
        return rel.delta
    if op is ShiftOperator.PIVOT:
        return f"pivot_to: {b.base}"
    old, new = a.slot_map(), b.slot_map()
    parts = [f"added {s}" for s in sorted(set(new) - set(old))]
    parts += [f"removed {s}" for s in sorted(set(old) - set(new))]
    parts += [f"changed {s}" for s in sorted(set(old) & set(new)) if old[s] != new[s]]
    return "; ".join(parts) or op.value


@dataclass
class ReleaseGraph:
    """One converted release graph plus what the world checks need.

    Attributes:
        graph: The converted graph (release ground truths, in this engine's format).
        file: Where it was read.
        root_map: Release slot names of the root → converted slots (τ² recipes).
        operators: Child intent id → the release's operator for its edge.
        products: WebShop: the root's product and the pivots' products (ASINs).
        duplicates: Children dropped as identical to the root or an earlier child once their
            recipes (derived arguments, restored defaults) were converted.
    """

    graph: IntentGraph
    file: Path
    root_map: SlotMap | None = None
    operators: dict[str, ShiftOperator] = field(default_factory=dict)
    products: dict[str, str] = field(default_factory=dict)
    duplicates: int = 0


def _tau2_nodes(
    g: dict[str, Any], bench: str, env: str, file: Path
) -> tuple[Intent, list[Intent], dict[str, str], SlotMap] | None:
    """Root and children of a τ² graph converted from their recipes (None: no root recipe)."""
    root_raw = need(g, "root", dict, file, "")
    root_calls = recipe_calls(root_raw, file, "root")
    if root_calls is None:
        return None
    release_conds = conditions_from(
        need(root_raw, "conditions", list, file, "root"), file, "root.conditions"
    )
    root_map = map_root(release_conds, root_calls)
    root_base = _task_of(root_raw) or _base_text(root_raw)
    root = Intent.build(
        benchmark=bench,
        env_id=env,
        base=root_base,
        conditions=conditions_of(root_calls, list(range(len(root_calls)))),
        ground_truth=ground_truth_from(root_raw.get("ground_truth"), file, "root.ground_truth"),
        is_seed=bool(root_raw.get("is_seed", True)),
        source_record=str(root_raw.get("source_record") or root_base),
    )
    ids = {need(root_raw, "intent_id", str, file, "root"): root.intent_id}
    ops = {
        str(e.get("dst")): str(e.get("operator"))
        for e in g.get("edges") or []
        if isinstance(e, dict)
    }
    children: list[Intent] = []
    for i, c in enumerate(need(g, "children", list, file, "")):
        path = f"children[{i}]"
        old = need(c, "intent_id", str, file, path)
        calls = recipe_calls(c, file, path)
        if calls is None:
            _, node = _release_node(c, bench, env, file, path)
        else:
            pivot = ops.get(old) == "PIVOT"
            indices = list(range(len(calls))) if pivot else align(root_calls, calls)
            base = root_base
            if pivot:
                base = _task_of(c) or _base_text(c)
                if base == root_base:
                    base = f"{base}+{old}"
            src = c.get("source_record")
            node = Intent.build(
                benchmark=bench,
                env_id=env,
                base=base,
                conditions=conditions_of(calls, indices),
                ground_truth=ground_truth_from(c.get("ground_truth"), file, f"{path}.ground_truth"),
                is_seed=bool(c.get("is_seed", False)),
                source_record=str(src) if src is not None else None,
            )
        ids[old] = node.intent_id
        children.append(node)
    return root, children, ids, root_map


def convert_graph(g: Any, file: Path) -> ReleaseGraph:
    """Convert one release graph object (τ² nodes from their recipes)."""
    if not isinstance(g, dict):
        raise ConfigError("expected an object", file=file, field="<root>")
    gid = g.get("graph_id") or g.get("tree_id")
    if not isinstance(gid, str):
        raise ConfigError("required field is missing", file=file, field="tree_id")
    bench = _benchmark_of_graph(g, file)
    env = _env_of_graph(g, bench)
    converted = _tau2_nodes(g, bench, env, file) if bench.startswith("tau2_") else None
    root_map: SlotMap | None = None
    if converted is not None:
        root, children, ids, root_map = converted
    else:
        old_root, root = _release_node(need(g, "root", dict, file, ""), bench, env, file, "root")
        ids = {old_root: root.intent_id}
        children = []
        for i, c in enumerate(need(g, "children", list, file, "")):
            old, node = _release_node(c, bench, env, file, f"children[{i}]")
            ids[old] = node.intent_id
            children.append(node)
    unique: list[Intent] = []
    seen = {root.intent_id}
    for c in children:  # a relaxation whose recipe restores the dropped default is the root
        if c.intent_id not in seen:
            seen.add(c.intent_id)
            unique.append(c)
    duplicates = len(children) - len(unique)
    children = unique
    by_id = {n.intent_id: n for n in (root, *children)}
    edges = []
    linked: set[tuple[str, str]] = set()
    operators: dict[str, ShiftOperator] = {}
    for i, e in enumerate(need(g, "edges", list, file, "")):
        op = need(e, "operator", str, file, f"edges[{i}]")
        if op not in _OPS:
            raise ConfigError(f"unknown operator {op!r}", file=file, field=f"edges[{i}].operator")
        src = need(e, "src", str, file, f"edges[{i}]")
        dst = need(e, "dst", str, file, f"edges[{i}]")
        if src not in ids or dst not in ids:
            raise ConfigError("edge names an unknown node", file=file, field=f"edges[{i}]")
        prov = e.get("provenance") if e.get("provenance") in ("REAL", "SYNTHETIC") else "SYNTHETIC"
        if ids[src] == ids[dst] or (ids[src], ids[dst]) in linked:
            continue
        linked.add((ids[src], ids[dst]))
        operators[ids[dst]] = _OPS[op]
        edges.append(
            Edge(
                src=ids[src],
                dst=ids[dst],
                operator=_OPS[op],
                delta=_diff_text(by_id[ids[src]], by_id[ids[dst]], _OPS[op]),
                provenance=prov,
                gt_moved=bool(e.get("gt_moved", True)),
            )
        )
    cfg_any = g.get("config")
    cfg_raw: dict[str, Any] = cfg_any if isinstance(cfg_any, dict) else {}
    config: dict[str, str | int | float | bool] = {
        k: v for k, v in sorted(cfg_raw.items()) if isinstance(v, (str, int, float, bool))
    }
    config["source"] = "release"
    graph = IntentGraph(
        graph_id=gid,
        benchmark=bench,
        env_id=env,
        root=root,
        children=tuple(children),
        edges=tuple(edges),
        config=config,
    )
    products: dict[str, str] = {}
    if bench == "webshop":
        products = _products(g, ids)
    return ReleaseGraph(graph, file, root_map, operators, products, duplicates)


def _products(g: dict[str, Any], ids: dict[str, str]) -> dict[str, str]:
    """Converted intent id → the product (ASIN) a WebShop node is about."""
    out: dict[str, str] = {}
    nodes = [g.get("root"), *(g.get("children") or [])]
    for raw in nodes:
        if not isinstance(raw, dict):
            continue
        base = raw.get("base")
        asin = base.get("asin") if isinstance(base, dict) else None
        if isinstance(asin, str) and raw.get("intent_id") in ids:
            out[ids[str(raw["intent_id"])]] = asin
    return out


def state_hash_text(raw: str) -> str:
    """The τ² database hash inside a release value (``{"db": h, "errors": []}``)."""
    try:
        obj = json.loads(raw)
    except ValueError:
        return raw
    return str(obj.get("db", raw)) if isinstance(obj, dict) else raw
