"""Write this engine's τ² graphs and samples in the Drift-Bench++ release format (tests).

The release's own files in ``../shared`` are few; the importer must handle the format, not
those files. This writer produces release-shaped graphs from bundled graphs the way the release
does: node conditions name only what the user holds (one argument of every call is left to the
recipe, as a derived argument), extra requests of refinements are ``also:<n>:<tool>``
conditions, ``recipe.actions`` carries every call, and ground truths are
``{"db": <hash>, "errors": []}``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from core.model.intent import IntentGraph, ShiftOperator
from core.model.sample import FaultType, Sample

_OP_NAMES = {
    ShiftOperator.REFINE: "REFINEMENT",
    ShiftOperator.RELAX: "RELAXATION",
    ShiftOperator.SUBSTITUTE: "SUBSTITUTION",
    ShiftOperator.PIVOT: "PIVOT",
}


def _canon(v: Any) -> str:
    return json.dumps(v, sort_keys=True, separators=(",", ":"))


def _derived(args: dict[str, Any]) -> str | None:
    """The argument left to the recipe (the alphabetically last of a call with several)."""
    return sorted(args)[-1] if len(args) >= 2 else None


def _node(world: Any, intent: Any, root_calls: int | None, hidden: set[str]) -> dict[str, Any]:
    calls = [(a.tool, dict(a.args)) for a in world.compile_intent(intent)]
    conds: list[list[Any]] = []
    for i, (tool, args) in enumerate(calls):
        if root_calls is not None and i >= root_calls:
            conds.append([f"also:{7 + i}:{tool}", "=", _canon(args)])
            continue
        skip = _derived(args)
        for k, v in sorted(args.items()):
            slot = f"arg:{i}:{tool}:{k}"
            if k != skip or slot in hidden:
                conds.append([slot, "=", _canon(v)])
    gt = intent.ground_truth.value[0] if intent.ground_truth else ""
    return {
        "intent_id": f"rel-{intent.intent_id}",
        "base": {"kind": "request", "writes": [t for t, _ in calls]},
        "conditions": conds,
        "recipe": {"actions": [{"name": t, "arguments": a} for t, a in calls]},
        "ground_truth": {"kind": "statehash", "value": json.dumps({"db": gt, "errors": []})},
        "is_seed": intent.is_seed,
        "source_record": intent.source_record or intent.base,
    }


def write_release(out: Path, world: Any, graphs: list[IntentGraph], samples: list[Sample]) -> int:
    """Write ``graphs`` and the noise/withheld ``samples`` on them in the release format.

    Returns:
        The number of samples written.
    """
    (out / "graphs").mkdir(parents=True, exist_ok=True)
    by_graph: dict[str, list[Sample]] = {}
    for s in samples:
        by_graph.setdefault(s.graph_id, []).append(s)
    results = []
    for g in graphs:
        hidden = {h for s in by_graph.get(g.graph_id, []) for h in s.hidden_slots}
        n_root = len(world.compile_intent(g.root))
        ops = {e.dst: e.operator for e in g.edges}
        children = []
        for c in g.children:
            refine = ops.get(c.intent_id) is ShiftOperator.REFINE
            children.append(_node(world, c, n_root if refine else None, set()))
        doc = {
            "adapter": g.benchmark,
            "tree_id": g.graph_id,
            "env_spec": {"domain": g.benchmark.removeprefix("tau2_")},
            "config": {"branching": 8, "seed": 1},
            "root": _node(world, g.root, None, hidden),
            "children": children,
            "edges": [
                {
                    "src": f"rel-{e.src}",
                    "dst": f"rel-{e.dst}",
                    "operator": _OP_NAMES[e.operator],
                    "delta": {},
                    "gt_moved": e.gt_moved,
                    "provenance": e.provenance,
                }
                for e in g.edges
            ],
        }
        (out / "graphs" / f"{g.graph_id}.json").write_text(json.dumps(doc), encoding="utf-8")
        for s in by_graph.get(g.graph_id, []):
            if len(s.faults) != 1:
                continue
            f = s.faults[0]
            mask: dict[str, Any] = {"literal_readings": []}
            if f is FaultType.INSUFFICIENT_INFORMATION:
                mask["withheld"] = list(s.hidden_slots)
            elif f not in (FaultType.INDIRECT_INTENT, FaultType.CONTEXTUAL_IRRELEVANCE):
                continue
            results.append(
                {
                    "tree": g.graph_id,
                    "strategy": f.value,
                    "status": "admitted",
                    "query": s.query,
                    "mask": mask,
                }
            )
    (out / "samples_learn.json").write_text(
        json.dumps({"summary": {"split": "learn"}, "results": results}), encoding="utf-8"
    )
    return len(results)
